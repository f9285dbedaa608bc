"""The HTTP listener: GET /health and POST /sql (raw body or form-encoded
query=), the JSON shapes of results, OKs and errors, 404 and 413."""

import json
import select
import socket
import urllib.parse

import pymysql
import pytest

from helpers import http_request, rows


def sql(http, statement, form=False, content_type=None):
    """POSTs one statement; returns (status, decoded JSON)."""
    if form:
        body = urllib.parse.urlencode({"query": statement}).encode()
        content_type = content_type or "application/x-www-form-urlencoded"
    else:
        body = statement.encode() if isinstance(statement, str) else statement
        content_type = content_type or "text/plain"
    status, headers, raw = http("/sql", body, content_type=content_type)
    assert "json" in headers.get("Content-Type", ""), headers
    return status, json.loads(raw.decode("utf-8"))


def test_health(http):
    status, headers, body = http("/health")
    assert status == 200
    doc = json.loads(body)
    assert doc["status"] == "ok"
    assert "json" in headers.get("Content-Type", "")


def test_result_shape(http, cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (tag STRING, n INT, f FLOAT, big BIGINT)")
    cur.execute(f"INSERT INTO {t} (id, tag, n, f, big) VALUES (1, 'a 😀', -5, 0.5, 9223372036854775807), "
                "(2, NULL, NULL, NULL, NULL)")
    status, doc = sql(http, f"SELECT id, tag, n, f, big FROM {t}")
    assert status == 200
    assert isinstance(doc, list) and len(doc) == 1
    r = doc[0]
    assert r["error"] == "" and r["warning"] == ""
    assert [list(c) for c in r["columns"]] == [["id"], ["tag"], ["n"], ["f"], ["big"]]
    types = [list(c.values())[0]["type"] for c in r["columns"]]
    assert types[0] == "long long" and types[4] == "long long"
    assert types[2] == "long" and types[3] == "float" and types[1] == "string"
    assert r["data"] == [
        {"id": 1, "tag": "a 😀", "n": -5, "f": 0.5, "big": 9223372036854775807},
        {"id": 2, "tag": None, "n": None, "f": None, "big": None},
    ]
    assert r["total"] == 2


def test_form_encoded_same_as_raw(http, cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (tag STRING)")
    cur.execute(f"INSERT INTO {t} (id, tag) VALUES (1, 'x&y=z%20+'), (2, 'b')")
    q = f"SELECT id, tag FROM {t} WHERE tag != 'none' AND id >= 1"
    s1, raw = sql(http, q)
    s2, form = sql(http, q, form=True)
    assert s1 == s2 == 200
    assert raw == form
    assert raw[0]["data"][0] == {"id": 1, "tag": "x&y=z%20+"}


def test_curl_style_raw_body_with_form_content_type(http, cur, uniq):
    """`curl -d 'SQL'` labels a raw statement as a form; it still runs,
    even with '%', '=' and '&' in it."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (tag STRING)")
    cur.execute(f"INSERT INTO {t} (id, tag) VALUES (1, 'a&b'), (2, 'c')")
    s, doc = sql(http, f"SELECT id FROM {t} WHERE tag = 'a&b'",
                 content_type="application/x-www-form-urlencoded")
    assert s == 200 and doc[0]["data"] == [{"id": 1}], doc
    s, doc = sql(http, "SHOW VARIABLES LIKE 'max_allowed%'",
                 content_type="application/x-www-form-urlencoded")
    assert s == 200 and doc[0]["data"][0]["Variable_name"] == "max_allowed_packet", doc


def test_ok_shape_and_writes_visible_to_mysql(http, cur, uniq):
    t = uniq()
    s, doc = sql(http, f"CREATE TABLE {t} (tag STRING, n INT)")
    assert s == 200 and doc[0]["error"] == ""
    s, doc = sql(http, f"INSERT INTO {t} (tag, n) VALUES ('a', 1), ('b', 2)")
    assert s == 200
    assert doc == [{"total": 2, "error": "", "warning": "", "last_insert_id": 1}]
    assert rows(cur, f"SELECT id, tag, n FROM {t}") == [(1, "a", 1), (2, "b", 2)]
    cur.execute(f"UPDATE {t} SET n = 10 WHERE id = 2")
    s, doc = sql(http, f"SELECT n FROM {t} WHERE id = 2", form=True)
    assert doc[0]["data"] == [{"n": 10}]
    s, doc = sql(http, f"DELETE FROM {t} WHERE id IN (1, 2)")
    assert s == 200 and doc[0]["total"] == 2


@pytest.mark.parametrize("statement,errno,state", [
    ("SELECT * FORM x", 1064, "42000"),
    ("SELECT * FROM http_no_such_table", 1146, "42S02"),
    ("SELECT nosuchcol FROM {t}", 1054, "42S22"),
    ("INSERT INTO {t} (id, n) VALUES (1, 2147483648)", 1264, "22003"),
    ("INSERT INTO {t} (id, n) VALUES (7, 1)", 1062, "23000"),
])
def test_error_shape_same_message_as_mysql(http, cur, uniq, statement, errno, state):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (n INT)")
    cur.execute(f"INSERT INTO {t} (id, n) VALUES (7, 7)")
    statement = statement.format(t=t)
    with pytest.raises(pymysql.err.MySQLError) as ei:
        cur.execute(statement)
    status, doc = sql(http, statement)
    assert status == 400
    assert doc == {"error": ei.value.args[1], "code": errno, "sqlstate": state}
    assert ei.value.args[0] == errno


def test_invalid_utf8_statement_gets_json_error(http):
    status, doc = sql(http, b"SELECT * FROM \xff\xfe WHERE")
    assert status == 400 and doc["code"] > 1000 and isinstance(doc["error"], str)


def test_empty_statement(http):
    status, doc = sql(http, b"")
    assert status == 400 and doc["error"]


def test_unknown_path_404(http):
    assert http("/nope")[0] == 404
    assert http("/nope", b"SELECT 1", content_type="text/plain")[0] == 404
    assert http("/sqlx", b"SELECT 1", content_type="text/plain")[0] == 404


def read_http_status(sock, timeout):
    """The status code of the response on sock, or None if none came."""
    sock.settimeout(timeout)
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    if not data.startswith(b"HTTP/1."):
        return None
    return int(data.split(b" ", 2)[1])


def test_body_too_large_413(auth_server):
    """http_max_body = 64K on the auth server."""
    port = auth_server.http_port
    body = b"SELECT '" + b"x" * 100_000 + b"'"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"POST /sql HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body))
        status = read_http_status(s, 2)             # refused from the header alone
        if status is None:
            try:
                s.sendall(body)
            except OSError:
                pass
            status = read_http_status(s, 10)
    assert status == 413
    assert http_request(port, "/health")[0] == 200


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith("VmRSS:"))


def test_chunked_body_too_large_413(auth_server):
    """Chunked: no length declared. 12.5 MB go up in chunks; the server must
    not keep them (its memory stays flat while they arrive) and answers 413,
    at the latest once the body ends. (It reads and discards up to 16 MB
    past the limit so the client sees the 413; beyond that it closes the
    connection, as docs/http.md says.)"""
    port = auth_server.http_port
    before = rss_kb(auth_server.proc.pid)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"POST /sql HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"10000\r\n" + b"y" * 0x10000 + b"\r\n"
        sent, answered = 0, False
        for _ in range(200):
            try:
                s.sendall(chunk)
            except OSError:
                answered = True
                break
            sent += len(chunk)
            if select.select([s], [], [], 0)[0]:
                answered = True
                break
        grown = rss_kb(auth_server.proc.pid) - before
        assert grown < 16 * 1024, f"server memory grew by {grown} KB while refusing a body"
        if not answered:
            s.sendall(b"0\r\n\r\n")
        status = read_http_status(s, 10)
    assert status == 413, f"no 413 (connection closed) after {sent >> 20} MB of chunks"


def test_http_body_under_limit_served(auth_server):
    port = auth_server.http_port
    # Under the limit is served.
    small = b"SELECT '" + b"z" * 60_000 + b"'"
    st, _, raw = http_request(port, "/sql", small, content_type="text/plain")
    assert st == 200
    assert list(json.loads(raw)[0]["data"][0].values()) == ["z" * 60_000]
    assert http_request(port, "/health")[0] == 200


def search(http, req):
    """POSTs a JSON search request; returns (status, decoded JSON)."""
    body = req if isinstance(req, bytes) else json.dumps(req).encode()
    status, headers, raw = http("/search", body, content_type="application/json")
    assert "json" in headers.get("Content-Type", ""), headers
    return status, json.loads(raw.decode("utf-8"))


def hit_ids(doc):
    return [h["_id"] for h in doc["hits"]["hits"]]


@pytest.fixture
def shop(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, body TEXT, tag STRING, price FLOAT, n INT)")
    cur.execute(f"INSERT INTO {t} VALUES (1, 'The quick brown fox', 'jumps over the lazy dog', 'animal', 1.5, 3), "
                "(2, 'Lazy afternoon', 'a dog sleeps in the sun', 'life', 9.5, 1), "
                "(3, 'Fox news', 'news about foxes', 'news', 3.0, 2), "
                "(4, 'Maybe later', 'no animals here', 'life', 20.0, 5)")
    return t


def test_search_match_shapes_and_source(http, cur, shop):
    """Manticore's /search: the hits shape, match over all fields (words
    ORed), a field list, operator and, match_phrase, query_string, and each
    hit's _score the WEIGHT() the same query has over SQL."""
    status, doc = search(http, {"table": shop, "query": {"match": {"*": "dog fox"}}})
    assert status == 200 and doc["timed_out"] is False and isinstance(doc["took"], int)
    assert doc["hits"]["total"] == 3 and doc["hits"]["total_relation"] == "eq"
    weights = dict(rows(cur, f"SELECT id, WEIGHT() FROM {shop} WHERE MATCH('dog | fox')"))
    assert hit_ids(doc) == sorted(weights, key=lambda i: -weights[i])
    for h in doc["hits"]["hits"]:
        assert h["_score"] == pytest.approx(weights[h["_id"]], rel=1e-5)
    first = doc["hits"]["hits"][0]
    assert first["_source"] == {"title": "The quick brown fox", "body": "jumps over the lazy dog",
                                "tag": "animal", "price": 1.5, "n": 3}
    cases = [({"match": {"title": "fox"}}, [1, 3]),
             ({"match": {"title,body": {"query": "lazy dog", "operator": "and"}}}, [1, 2]),
             ({"match": {"!body": "fox"}}, [1, 3]), ({"match": {"!title": "fox"}}, []),  # 'foxes' is another word
             ({"match": {"_all": "MAYBE later"}}, [4]),  # operator words are words here
             ({"match_phrase": {"body": "lazy dog"}}, [1]),
             ({"match_phrase": {"*": "dog lazy"}}, []),
             ({"query_string": "@title fox -news"}, [1]),
             ({"query_string": {"query": "\"quick fox\"~2"}}, [1]),
             ({"match_all": {}}, [1, 2, 3, 4])]
    for q, want in cases:
        status, doc = search(http, {"table": shop, "query": q})
        assert status == 200, (q, doc)
        assert sorted(hit_ids(doc)) == want, (q, doc)
    status, doc = search(http, {"index": shop, "query": {"match": {"title": "fox"}},
                                "_source": ["title", "price"], "sort": [{"price": "desc"}]})
    assert [(h["_id"], h["_source"]) for h in doc["hits"]["hits"]] == [
        (3, {"title": "Fox news", "price": 3}), (1, {"title": "The quick brown fox", "price": 1.5})]
    status, doc = search(http, {"table": shop, "_source": False, "sort": ["id"], "limit": 2, "offset": 1})
    assert doc["hits"]["hits"] == [{"_id": 2, "_score": 1}, {"_id": 3, "_score": 1}]
    assert doc["hits"]["total"] == 4
    status, doc = search(http, {"table": shop, "_source": {"excludes": ["body", "tag"]}, "sort": [{"id": {"order": "desc"}}],
                                "size": 1})
    assert doc["hits"]["hits"] == [{"_id": 4, "_score": 1, "_source": {"title": "Maybe later", "price": 20, "n": 5}}]


def test_search_bool_filters_highlight_options(http, cur, shop):
    """bool: must ANDs, should ORs (and counts only alone, as in Manticore),
    must_not negates, full-text and filters alike; equals, in, range;
    highlight with Elasticsearch's tag names; options reach OPTION."""
    cases = [({"bool": {"must": [{"match": {"*": "dog"}}, {"range": {"price": {"gte": 2}}}]}}, [2]),
             ({"bool": {"should": [{"equals": {"tag": "news"}}, {"in": {"n": [1, 5]}}]}}, [2, 3, 4]),
             ({"bool": {"should": [{"match": {"*": "dog"}}, {"match": {"*": "news"}}]}}, [1, 2, 3]),
             ({"bool": {"must": [{"match": {"*": "dog"}}], "should": [{"equals": {"n": 99}}]}}, [1, 2]),
             ({"bool": {"must": [{"match": {"*": "dog fox"}}], "must_not": [{"match": {"title": "news"}},
                                                                            {"equals": {"n": 1}}]}}, [1]),
             ({"bool": {"filter": {"range": {"price": {"gt": 1.5, "lt": 20}}}}}, [2, 3]),
             ({"bool": {"must": [{"bool": {"should": [{"equals": {"n": 1}}, {"equals": {"n": 2}}]}},
                                 {"match": {"*": "dog news"}}]}}, [2, 3]),
             ({"equals": {"tag": "life"}}, [2, 4])]
    for q, want in cases:
        status, doc = search(http, {"table": shop, "query": q})
        assert status == 200, (q, doc)
        assert sorted(hit_ids(doc)) == want, (q, doc)
    status, doc = search(http, {"table": shop, "query": {"match": {"body": "dog"}},
                                "highlight": {"fields": ["body"], "pre_tags": "<em>", "post_tags": "</em>"},
                                "_source": False, "sort": ["id"]})
    assert doc["hits"]["hits"] == [{"_id": 1, "_score": doc["hits"]["hits"][0]["_score"],
                                    "highlight": {"body": ["jumps over the lazy <em>dog</em>"]}},
                                   {"_id": 2, "_score": doc["hits"]["hits"][1]["_score"],
                                    "highlight": {"body": ["a <em>dog</em> sleeps in the sun"]}}]
    status, doc = search(http, {"table": shop, "query": {"match": {"*": "fox"}}, "highlight": {}, "_source": False,
                                "sort": ["id"]})
    assert doc["hits"]["hits"][0]["highlight"] == {"*": ["The quick brown <b>fox</b> | jumps over the lazy dog"]}
    status, doc = search(http, {"table": shop, "query": {"match": {"*": "fox"}},
                                "options": {"ranker": "expr('sum(lcs)*10')", "field_weights": {"title": 3}}})
    assert sorted(h["_score"] for h in doc["hits"]["hits"]) == [10, 10]
    status, doc = search(http, {"table": shop, "query": {"match": {"*": "fox"}}, "options": {"ranker": "none"}})
    assert [h["_score"] for h in doc["hits"]["hits"]] == [1, 1]


@pytest.mark.parametrize("req, status, kind, reason", [
    (b"not json", 400, "parse_exception", "the request is not JSON"),
    ({"query": {"match_all": {}}}, 400, "parse_exception", "needs \"table\""),
    ({"tabel": "x"}, 400, "parse_exception", "unknown key 'tabel'"),
    ({"table": "SHOP", "query": {"foo": {}}}, 400, "parse_exception", "unknown query 'foo'"),
    ({"table": "SHOP", "query": {"match": {"*": "()"}}}, 400, "parse_exception", "the text has no words"),
    ({"table": "SHOP", "query": {"bool": {"should": [{"match": {"*": "a"}}, {"equals": {"n": 1}}]}}}, 400,
     "parse_exception", "should mixes full-text queries and attribute filters"),
    ({"table": "SHOP", "query": {"bool": {"must_not": {"bool": {"must": [{"match": {"*": "a"}}, {"equals": {"n": 1}}]}},
                                          "must": {"match": {"*": "b"}}}}}, 400,
     "parse_exception", "must_not query holds both"),
    ({"table": "SHOP", "query": {"equals": {"n; DROP": 1}}}, 400, "parse_exception", "is not a name"),
    ({"table": "SHOP", "query": {"range": {"n": {"above": 1}}}}, 400, "parse_exception", "unknown bound 'above'"),
    ({"table": "SHOP", "limit": -1}, 400, "parse_exception", "'limit' takes a whole number"),
    ({"table": "SHOP", "sort": [{"price": "up"}]}, 400, "parse_exception", "expected asc or desc"),
    ({"table": "SHOP", "query": {"match": {"nofield": "dog"}}}, 400, "query_exception", "unknown field 'nofield'"),
    ({"table": "SHOP", "query": {"equals": {"nocol": 1}}}, 400, "query_exception", "unknown column 'nocol'"),
    ({"table": "no_such_table"}, 400, "query_exception", "does not exist"),
])
def test_search_errors(http, shop, req, status, kind, reason):
    """Each bad request is a 400 in Manticore's error shape, saying what is
    wrong; the SQL layer's own errors (a field or table that does not exist)
    come through with the table named."""
    if isinstance(req, dict) and req.get("table") == "SHOP":
        req["table"] = shop
    got, doc = search(http, req)
    assert got == status, doc
    assert doc["status"] == status and doc["error"]["type"] == kind, doc
    assert reason in doc["error"]["reason"], doc


def test_search_empty_body_and_method(http):
    status, headers, raw = http("/search", b"", content_type="application/json")
    assert status == 400 and "JSON request in the body" in json.loads(raw)["error"]
    assert http("/search")[0] == 405


def test_search_knn_and_hybrid(http, cur, uniq):
    """"knn" in a /search request is knn() (each hit with _knn_dist);
    beside a full-text query with options.fusion_method 'rrf' it is a hybrid
    search (each hit with _hybrid_score), the same rows and scores as the
    SQL query it stands for."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, cat INT, v FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='2' "
                "HNSW_SIMILARITY='l2')")
    cur.execute(f"INSERT INTO {t} VALUES (1, 'machine learning', 1, (0, 0)), (2, 'learning machines', 2, (5, 5)), "
                "(3, 'pasta', 1, (0.1, 0.1)), (4, 'machine repair', 2, (0.2, 0)), (5, 'garden', 1, (9, 9))")
    status, doc = search(http, {"table": t, "knn": {"field": "v", "query_vector": [0, 0], "k": 2}, "_source": False})
    assert status == 200, doc
    assert [(h["_id"], h["_knn_dist"]) for h in doc["hits"]["hits"]] == [(1, 0), (3, pytest.approx(0.02))]
    status, doc = search(http, {"table": t, "knn": {"field": "v", "query": [0, 0], "k": 3, "ef": 50},
                                "query": {"equals": {"cat": 2}}, "_source": ["title"]})
    assert [h["_id"] for h in doc["hits"]["hits"]] == [4, 2]
    status, doc = search(http, {"table": t, "knn": {"field": "v", "doc_id": 5, "k": 1}, "_source": False})
    assert hit_ids(doc) == [5]
    status, doc = search(http, {"table": t, "knn": {"field": "v", "query_vector": [0, 0], "k": 2},
                                "query": {"match": {"title": "machine"}}, "options": {"fusion_method": "rrf"},
                                "_source": False, "limit": 10})
    assert status == 200, doc
    cur.execute(f"SELECT id, WEIGHT(), knn_dist(), hybrid_score() FROM {t} WHERE MATCH('(@title machine)') "
                "AND knn(v, 2, (0, 0)) LIMIT 10 OPTION fusion_method='rrf'")
    want = cur.fetchall()
    assert [(h["_id"], h["_score"], h["_knn_dist"], h["_hybrid_score"]) for h in doc["hits"]["hits"]] == [
        (i, pytest.approx(w, rel=1e-6), pytest.approx(d, rel=1e-6), pytest.approx(s, rel=1e-12)) for i, w, d, s in want]
    assert doc["hits"]["hits"][0]["_id"] == 1  # first in both searches
    # fusion_weights by name: "query" is the text's, the knn's its "name"
    status, doc = search(http, {"table": t, "knn": {"field": "v", "query_vector": [0, 0], "k": 2, "name": "dense"},
                                "query": {"match": {"title": "machine"}}, "_source": False, "limit": 10,
                                "options": {"fusion_method": "rrf", "fusion_weights": {"query": 2, "dense": 0.5}}})
    cur.execute(f"SELECT id, hybrid_score() FROM {t} WHERE MATCH('(@title machine)') AS text "
                "AND knn(v, 2, (0, 0)) AS d LIMIT 10 OPTION fusion_method='rrf', fusion_weights=(text=2, d=0.5)")
    assert [(h["_id"], h["_hybrid_score"]) for h in doc["hits"]["hits"]] == [
        (i, pytest.approx(s, rel=1e-12)) for i, s in cur.fetchall()]
    status, doc = search(http, {"table": t, "knn": {"field": "v", "query_vector": [0, 0], "name": "query"}})
    assert status == 400 and "other than 'query'" in doc["error"]["reason"]
    # several knn, fused (here twice the same search, named apart: each row's two ranks are equal)
    status, doc = search(http, {"table": t, "knn": [{"field": "v", "query_vector": [0, 0], "k": 2, "name": "x"},
                                                    {"field": "v", "query_vector": [0, 0], "k": 2, "name": "y"}],
                                "options": {"fusion_method": "rrf", "window_size": 2, "fusion_weights": {"y": 3}},
                                "_source": False})
    assert [(h["_id"], h["_hybrid_score"]) for h in doc["hits"]["hits"]] == [
        (1, pytest.approx(4 / 61)), (3, pytest.approx(4 / 62))]
    # without fusion_method: the k nearest among the text's matches
    status, doc = search(http, {"table": t, "knn": {"field": "v", "query_vector": [5, 5], "k": 1},
                                "query": {"match": {"title": "machine"}}, "_source": False})
    assert [(h["_id"], h["_knn_dist"]) for h in doc["hits"]["hits"]] == [(4, pytest.approx(48.04))]
    assert "_hybrid_score" not in doc["hits"]["hits"][0] and doc["hits"]["hits"][0]["_score"] > 0
    for req, reason in [({"table": t, "knn": {"field": "v"}}, "knn needs query_vector"),
                        ({"table": t, "knn": {"field": "v", "query_vector": ["a"]}}, "numbers only"),
                        ({"table": t, "knn": [{"field": "v", "query_vector": [0, 0]}] * 2},
                         "several knn() are a hybrid search"),
                        ({"table": t, "knn": []}, "the list is empty"),
                        ({"table": t, "knn": {"field": "v", "query_vector": [0, 0]}, "hybrid": {"query": "x"}},
                         "give knn or hybrid, not both"),
                        ({"table": t, "hybrid": {"query": "machine"}}, "needs a vector column with model_name")]:
        status, doc = search(http, req)
        assert status == 400 and reason in doc["error"]["reason"], (req, doc)


def test_search_aggs_are_grouped_counts(http, cur, shop):
    """"aggs" (Manticore's terms aggregation): per field, the count of the
    matching rows for each value, as GROUP BY field with COUNT(*) gives it
    over SQL, sorted as asked, size buckets (the request's limit without
    size, 20 when that is 0)."""
    status, doc = search(http, {"table": shop, "limit": 0, "aggs": {
        "tags": {"terms": {"field": "tag", "size": 5}, "sort": [{"count(*)": {"order": "desc"}}]},
        "ns": {"terms": {"field": "n", "order": {"_key": "desc"}}}}})
    assert status == 200, doc
    assert doc["hits"]["hits"] == [] and doc["hits"]["total"] == 4
    aggs = doc["aggregations"]
    assert aggs["tags"]["buckets"][0] == {"key": "life", "doc_count": 2}
    assert sorted((b["key"], b["doc_count"]) for b in aggs["tags"]["buckets"]) == [
        ("animal", 1), ("life", 2), ("news", 1)]
    assert [b["key"] for b in aggs["ns"]["buckets"]] == [5, 3, 2, 1]
    # over the matching rows only, each bucket as SQL counts it
    status, doc = search(http, {"table": shop, "query": {"match": {"*": "dog | fox"}}, "limit": 1,
                                "aggs": {"t": {"terms": {"field": "tag", "size": 10}, "sort": [{"tag": "asc"}]}}})
    cur.execute(f"SELECT tag, COUNT(*) FROM {shop} WHERE MATCH('dog | fox') GROUP BY tag ORDER BY tag ASC")
    assert [(b["key"], b["doc_count"]) for b in doc["aggregations"]["t"]["buckets"]] == list(cur.fetchall())
    assert len(doc["hits"]["hits"]) == 1
    for req, reason in [({"table": shop, "aggs": {"x": {"terms": {}}}}, "takes {\"terms\""),
                        ({"table": shop, "aggs": {"x": {"terms": {"field": "tag"}, "sort": [{"n": "asc"}]}}},
                         "sort by the field, count(*)"),
                        ({"table": shop, "aggs": {"x": {"terms": {"field": "nope"}}}}, "unknown column 'nope'"),
                        ({"table": shop, "aggs": {"x": {"terms": {"field": "title"}}}}, "full-text field")]:
        status, doc = search(http, req)
        assert status == 400 and reason in doc["error"]["reason"], (req, doc)


def doc_req(http, path, body):
    """POSTs a JSON document request (a dict, or NDJSON text); (status, answer)."""
    raw = body if isinstance(body, str) else json.dumps(body)
    status, headers, out = http(path, raw.encode(), content_type="application/x-ndjson" if path == "/bulk" else "application/json")
    assert "json" in headers.get("Content-Type", ""), headers
    return status, json.loads(out)


def test_document_api_insert_replace_update_delete(http, cur, uniq):
    """Manticore's /insert, /replace, /update and /delete: each request is the
    statement it stands for (the rows are then what SQL reads), doc values
    take their column's type (a JSON column any JSON, a vector column an
    array), and the answers and errors have Manticore's shapes."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, price FLOAT, tag STRING, j JSON, "
                "v FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='2' HNSW_SIMILARITY='l2')")
    assert doc_req(http, "/insert", {"table": t, "id": 1, "doc": {"title": "red bag", "price": 19.5, "tag": "x",
                                                                   "j": {"a": [1, 2], "b": "it's"}, "v": [0.5, 1]}}) == \
        (201, {"table": t, "_id": 1, "created": True, "result": "created", "status": 201})
    status, a = doc_req(http, "/insert", {"index": t, "doc": {"title": "auto id", "price": 1}})
    assert status == 201 and a["_id"] > 1
    auto = a["_id"]
    assert rows(cur, f"SELECT id, title, price, tag, j, v, j.a[1] FROM {t} ORDER BY id ASC") == \
        [(1, "red bag", 19.5, "x", '{"a":[1,2],"b":"it\'s"}', "0.5,1", "2"), (auto, "auto id", 1.0, None, None, None, None)]
    # a duplicate id: 409, as Manticore
    status, a = doc_req(http, "/insert", {"table": t, "id": 1, "doc": {"title": "dup"}})
    assert status == 409 and a["status"] == 409 and a["error"]["reason"] == "duplicate id '1'"
    assert doc_req(http, "/replace", {"table": t, "id": 1, "doc": {"title": "red bag two", "price": 20}}) == \
        (200, {"table": t, "_id": 1, "created": False, "result": "updated", "status": 200})
    assert doc_req(http, "/replace", {"table": t, "id": 5, "doc": {"title": "new five", "price": 5}})[1]["created"] is True
    assert doc_req(http, "/update", {"table": t, "id": 5, "doc": {"price": 6, "tag": "y"}}) == \
        (200, {"table": t, "_id": 5, "result": "updated"})
    assert doc_req(http, "/update", {"table": t, "query": {"match": {"title": "red"}}, "doc": {"tag": "z"}}) == \
        (200, {"table": t, "updated": 1})
    assert rows(cur, f"SELECT id, title, price, tag FROM {t} ORDER BY id ASC") == \
        sorted([(1, "red bag two", 20.0, "z"), (5, "new five", 6.0, "y"), (auto, "auto id", 1.0, None)])
    assert doc_req(http, "/delete", {"table": t, "id": 77}) == \
        (200, {"table": t, "_id": 77, "found": False, "result": "not found"})
    assert doc_req(http, "/delete", {"table": t, "id": 5}) == (200, {"table": t, "_id": 5, "found": True, "result": "deleted"})
    assert doc_req(http, "/delete", {"table": t, "query": {"range": {"price": {"lt": 2}}}}) == (200, {"table": t, "deleted": 1})
    assert rows(cur, f"SELECT id FROM {t}") == [(1,)]
    # errors: the request's, and the SQL layer's own words
    for path, body, status, reason in (
            ("/insert", "{", 400, "the request is not JSON"),
            ("/insert", {"id": 2, "doc": {}}, 400, 'the request needs "table"'),
            ("/insert", {"table": t, "id": 2}, 400, 'insert needs "doc"'),
            ("/insert", {"table": t, "id": -2, "doc": {"title": "x"}}, 400, '"id" must be a whole number'),
            ("/insert", {"table": t, "id": 2, "doc": {"nope": 1}}, 400, "unknown column 'nope'"),
            ("/insert", {"table": t, "id": 2, "doc": {"title": [1]}}, 400, "doc: 'title' takes a text, not a JSON array"),
            ("/insert", {"table": t, "id": 2, "doc": {"v": [1, "x"]}}, 400, "its array holds numbers only"),
            ("/insert", {"table": t, "id": 2, "doc": {"ti`tle": 1}}, 400, "is not a name"),
            ("/insert", {"table": "nosuch", "id": 2, "doc": {"title": "x"}}, 400, "table 'nosuch' does not exist"),
            ("/insert", {"table": t, "id": 2, "doc": {}, "extra": 1}, 400, "unknown key 'extra'"),
            ("/update", {"table": t, "doc": {"price": 1}}, 400, 'needs the document\'s "id" or a "query"'),
            ("/update", {"table": t, "id": 1, "doc": {}}, 400, "names no column to set"),
            ("/delete", {"table": t, "id": 1, "query": {"match_all": {}}}, 400, 'needs the document\'s "id" or a "query"'),
            ("/delete", {"table": t, "query": {"nope": {}}}, 400, "nope")):
        got_status, a = doc_req(http, path, body)
        assert got_status == status and a["status"] == status and reason in a["error"]["reason"], (path, body, a)
    assert rows(cur, f"SELECT id FROM {t}") == [(1,)]
    # no body at all, and GET: refused before any SQL
    for path in ("/insert", "/bulk"):
        status, _, raw = http(path, b"", content_type="application/json")
        assert status == 400 and b"JSON" in raw, (path, raw)
        status, headers, _ = http(path, method="GET")
        assert status == 405 and headers.get("Allow") == "POST", (path, headers)


def test_document_api_bulk(http, cur, uniq):
    """/bulk: NDJSON lines of insert (create), replace, update and delete; a
    run of one table's inserts, replaces and deletes is one transaction,
    ended by another table, an empty line, an update or the end; the first
    error stops the run and rolls its batch back (skipped_lines)."""
    t, u = uniq(), uniq()
    for name in (t, u):
        cur.execute(f"CREATE TABLE {name} (title TEXT, price INT)")
    lines = [{"insert": {"table": t, "id": 1, "doc": {"title": "a", "price": 1}}},
             {"create": {"table": t, "id": 2, "doc": {"title": "b", "price": 2}}},
             {"insert": {"table": u, "id": 1, "doc": {"title": "u"}}},
             None,
             {"replace": {"table": t, "id": 2, "doc": {"title": "b2", "price": 3}}},
             {"update": {"table": t, "id": 1, "doc": {"price": 9}}},
             {"delete": {"table": u, "id": 1}}]
    status, a = doc_req(http, "/bulk", "\n".join("" if x is None else json.dumps(x) for x in lines) + "\n")
    assert status == 200 and a["errors"] is False and a["current_line"] == 7 and a["skipped_lines"] == 0, a
    assert [(i["bulk"]["table"], i["bulk"]["_id"], i["bulk"]["created"], i["bulk"]["updated"], i["bulk"]["deleted"])
            for i in a["items"]] == [(t, 2, 2, 0, 0), (u, 1, 1, 0, 0), (t, 2, 0, 1, 0), (t, 1, 0, 1, 0), (u, 1, 0, 0, 1)]
    assert rows(cur, f"SELECT id, title, price FROM {t} ORDER BY id ASC") == [(1, "a", 9), (2, "b2", 3)]
    assert rows(cur, f"SELECT COUNT(*) FROM {u}") == [(0,)]
    # an error in a batch: none of the batch, what came before stays
    bad = [{"insert": {"table": u, "id": 5, "doc": {"title": "kept"}}},
           None,
           {"insert": {"table": u, "id": 6, "doc": {"title": "gone"}}},
           {"insert": {"table": u, "id": 6, "doc": {"title": "dup"}}},
           {"insert": {"table": u, "id": 7, "doc": {"title": "never read"}}}]
    status, a = doc_req(http, "/bulk", "\n".join("" if x is None else json.dumps(x) for x in bad))
    # (a duplicate within a transaction shows at its COMMIT: the batch's three lines are undone)
    assert status == 400 and a["errors"] is True and "duplicate id '6'" in a["error"], a
    assert a["current_line"] == 5 and a["skipped_lines"] == 3 and len(a["items"]) == 1, a
    assert rows(cur, f"SELECT id FROM {u} ORDER BY id ASC") == [(5,)]
    bad[0] = {"insert": {"table": u, "id": 15, "doc": {"title": "kept too"}}}
    bad[3] = {"insert": {"table": u, "id": 8, "doc": {"nope": "x"}}}
    status, a = doc_req(http, "/bulk", "\n".join("" if x is None else json.dumps(x) for x in bad))
    assert status == 400 and "line 4: unknown column 'nope'" in a["error"], a
    assert a["current_line"] == 4 and a["skipped_lines"] == 2, a
    assert rows(cur, f"SELECT id FROM {u} ORDER BY id ASC") == [(5,), (15,)]
    status, a = doc_req(http, "/bulk", '{"insert": {"table": "%s", "id": 9, "doc": {}}}\n{"upsert": {}}\n' % u)
    assert status == 400 and a["current_line"] == 2 and a["skipped_lines"] == 1 and "expected one of insert" in a["error"], a
    assert rows(cur, f"SELECT id FROM {u} ORDER BY id ASC") == [(5,), (15,)]
    status, a = doc_req(http, "/bulk", "not json\n")
    assert status == 400 and "line 1 is not JSON" in a["error"]


def test_search_over_json_properties(http, cur, uniq):
    """/search's equals, in, range, sort and terms aggregations take a JSON
    column's property by its dotted path ("attrs.color"), as the SQL they
    stand for; a path part that is not a name is refused."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, attrs JSON)")
    for i, (color, size) in enumerate([("red", 3), ("blue", 5), ("red", 7), ("green", 1), ("red", 9)], start=1):
        doc_req(http, "/insert", {"table": t, "id": i, "doc": {"title": "bag", "attrs": {"color": color, "dim": {"size": size}}}})
    status, _, body = http("/search", json.dumps({
        "table": t, "query": {"bool": {"must": [{"equals": {"attrs.color": "red"}}, {"range": {"attrs.dim.size": {"gte": 3}}}]}},
        "sort": [{"attrs.dim.size": "desc"}], "_source": False,
        "aggs": {"c": {"terms": {"field": "attrs.color", "size": 5}, "sort": [{"count(*)": "desc"}]}}}).encode(),
        content_type="application/json")
    a = json.loads(body)
    assert status == 200 and [h["_id"] for h in a["hits"]["hits"]] == [5, 3, 1], a
    assert a["aggregations"]["c"]["buckets"] == [{"key": "red", "doc_count": 3}], a
    status, _, body = http("/search", json.dumps({"table": t, "query": {"in": {"attrs.color": ["blue", "green"]}},
                                                  "sort": ["id"], "_source": False}).encode(), content_type="application/json")
    assert [h["_id"] for h in json.loads(body)["hits"]["hits"]] == [2, 4]
    status, _, body = http("/search", json.dumps({"table": t, "query": {"equals": {"attrs.co-lor": 1}}}).encode(),
                           content_type="application/json")
    assert status == 400 and "or a JSON path of them joined by '.'" in json.loads(body)["error"]["reason"]


def test_search_script_fields(http, cur, uniq):
    """/search's "script_fields" (Manticore's older spelling of
    "expressions", its manual's example): inline SQL expressions shown in
    _source, usable by name in a filter and in sort."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, gid INT, rating STRING)")
    cur.execute(f"INSERT INTO {t} (id, title, gid, rating) VALUES (1, 'star wars', 3, 'PG'), (2, 'star trek', 5, 'R'), "
                "(3, 'lone star', 7, 'PG-13'), (4, 'starless', 9, 'TV-PG')")
    req = {"table": t, "script_fields": {
        "add_all": {"script": {"inline": "( gid * 10 ) | crc32(title)"}},
        "cond2": {"script": {"inline": "IF(IN(rating, 'TV-PG', 'PG'), 2, IF(IN(rating, 'TV-14', 'PG-13'), 1, 0))"}}},
        "query": {"bool": {"must": [{"match": {"*": "star"}}, {"range": {"cond2": {"gte": 1}}}]}},
        "sort": [{"cond2": "desc"}, {"gid": "asc"}]}
    status, _, body = http("/search", json.dumps(req).encode(), content_type="application/json")
    a = json.loads(body)
    assert status == 200, a
    want = rows(cur, f"SELECT id, (gid * 10) | CRC32(title), IF(IN(rating, 'TV-PG', 'PG'), 2, "
                     f"IF(IN(rating, 'TV-14', 'PG-13'), 1, 0)) c FROM {t} WHERE MATCH('star') AND c >= 1 "
                     "ORDER BY c DESC, gid ASC")
    assert [(h["_id"], h["_source"]["add_all"], h["_source"]["cond2"]) for h in a["hits"]["hits"]] == want
    assert [w[0] for w in want] == [1, 3]
    for sf, reason in (({"x": {"script": {"source": "1"}}}, "only inline scripts"), ({"x": "1"}, "takes {\"script\""),
                       ({"x": {"script": {"inline": "nosuch + 1"}}}, "unknown column 'nosuch'"),
                       ({"x": {"script": {"inline": "1) AS y, (2"}}}, "script_fields: 'x' is not one expression")):
        status, _, body = http("/search", json.dumps({"table": t, "script_fields": sf}).encode(),
                               content_type="application/json")
        assert status == 400 and reason in json.loads(body)["error"]["reason"], (sf, body)


def test_search_expressions(http, cur, uniq):
    """/search's "expressions" (Manticore's): named computed columns, shown
    in _source, sortable and aggregatable by name, the same values as the
    SQL expressions; what is not one expression is refused."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, year INT, tag STRING)")
    cur.execute(f"INSERT INTO {t} (id, title, year, tag) VALUES (1, 'a', 1999, 'x'), (2, 'b', 2004, 'y'), "
                "(3, 'c', 2008, 'x'), (4, 'd', 2012, 'z')")
    req = {"table": t, "expressions": {"decade": "year DIV 10 * 10", "label": "CONCAT(UPPER(tag), '-', TO_STRING(year))"},
           "sort": [{"label": "desc"}], "_source": ["title"], "aggs": {"d": {"terms": {"field": "decade", "size": 5},
                                                                           "sort": [{"_key": "asc"}]}}}
    status, _, body = http("/search", json.dumps(req).encode(), content_type="application/json")
    a = json.loads(body)
    assert status == 200, a
    want = rows(cur, f"SELECT id, title, year DIV 10 * 10, CONCAT(UPPER(tag), '-', TO_STRING(year)) l FROM {t} "
                     "ORDER BY l DESC")
    assert [(h["_id"], h["_source"]["title"], h["_source"]["decade"], h["_source"]["label"]) for h in a["hits"]["hits"]] == want
    assert a["aggregations"]["d"]["buckets"] == [{"key": 1990, "doc_count": 1}, {"key": 2000, "doc_count": 2},
                                                 {"key": 2010, "doc_count": 1}]
    for ex, reason in (({"x": "1) AS y, (2"}, "'x' is not one expression"), ({"x": "year AS z"}, "'x' is not one expression"),
                       ({"x": 5}, "takes the expression as a string"), ({"x-y": "1"}, "is not a name"),
                       ({"x": "nosuch + 1"}, "unknown column 'nosuch'")):
        status, _, body = http("/search", json.dumps({"table": t, "expressions": ex}).encode(), content_type="application/json")
        assert status == 400 and reason in json.loads(body)["error"]["reason"], (ex, body)
