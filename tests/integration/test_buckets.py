"""Bucket functions for faceting, as Manticore's: HISTOGRAM(), RANGE(),
DATE_HISTOGRAM() and DATE_RANGE() in GROUP BY and FACET, and /search's histogram, range and
date_histogram aggregations, all checked against the same rows counted in
Python (rows in a sealed segment and in RAM)."""

import calendar
import datetime
import json
import math
import random
import re
import struct
import time

from helpers import expect_error, rows


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def _model(seed=21, n=300):
    rnd = random.Random(seed)
    docs = {}
    t0 = calendar.timegm((2016, 11, 20, 0, 0, 0))
    for i in range(1, n + 1):
        docs[i] = {"price": rnd.randint(-150, 1200), "w": f32(rnd.uniform(-20, 80)),
                   "ts": t0 + rnd.randint(0, 400 * 86400), "word": rnd.choice(["red", "blue"])}
    return docs


def _load(cur, t, docs):
    cur.execute(f"CREATE TABLE {t} (title TEXT, price INT, w FLOAT, ts TIMESTAMP)")

    def ins(ids):
        cur.execute(f"INSERT INTO {t} (id, title, price, w, ts) VALUES " +
                    ", ".join(f"({i}, '{docs[i]['word']}', {docs[i]['price']}, {docs[i]['w']!r}, {docs[i]['ts']})"
                              for i in ids))

    ins(range(1, 201))
    cur.execute(f"FLUSH TABLE {t}")
    ins(range(201, len(docs) + 1))


def hist(v, interval, offset=0):
    return offset + interval * math.floor((v - offset) / interval)


def month_start(ts, months=1):
    d = datetime.datetime.fromtimestamp(ts, datetime.timezone.utc)
    m = (d.month - 1) // months * months + 1
    return calendar.timegm((d.year, m, 1, 0, 0, 0))


def week_start(ts):
    day = ts // 86400
    return (day - (day - 4) % 7) * 86400  # weeks from Monday 1970-01-05


def counts(keys):
    out = {}
    for k in keys:
        out[k] = out.get(k, 0) + 1
    return sorted(out.items())


def test_bucket_functions_in_group_by_and_facet(cur, uniq):
    docs = _model()
    t = uniq()
    _load(cur, t, docs)
    P = [d["price"] for d in docs.values()]
    for iv, off in ((100, 0), (100, 30), (7, 3), (1000, 999)):
        got = rows(cur, f"SELECT HISTOGRAM(price, {{hist_interval={iv}, hist_offset={off}}}) AS h, COUNT(*) FROM {t} "
                        f"GROUP BY h ORDER BY h ASC LIMIT 1000")
        assert got == counts(hist(p, iv, off) for p in P), (iv, off)
    # a float interval over a FLOAT column: doubles
    got = rows(cur, f"SELECT HISTOGRAM(w, {{hist_interval=2.5, hist_offset=0.5}}) AS h, COUNT(*) FROM {t} "
                    f"GROUP BY h ORDER BY h ASC LIMIT 1000")
    want = counts(hist(d["w"], 2.5, 0.5) for d in docs.values())
    assert [(round(k, 9), c) for k, c in got] == [(round(k, 9), c) for k, c in want]
    # RANGE: the first range holding the value, -1 for none
    edges = [(None, 0), (0, 250.5), (250.5, 800), (1000, None)]
    spec = ", ".join("{" + ", ".join(x for x in (f"range_from={a}" if a is not None else "",
                                                 f"range_to={b}" if b is not None else "") if x) + "}" for a, b in edges)

    def rng(v):
        for k, (a, b) in enumerate(edges):
            if (a is None or v >= a) and (b is None or v < b):
                return k
        return -1
    got = rows(cur, f"SELECT RANGE(price, {spec}) AS r, COUNT(*) FROM {t} GROUP BY r ORDER BY r ASC")
    assert got == counts(rng(p) for p in P)
    # DATE_HISTOGRAM: calendar months, quarters, years, ISO weeks, days; fixed buckets
    T = [d["ts"] for d in docs.values()]
    for interval, fn in (("month", month_start), ("1M", month_start), ("quarter", lambda x: month_start(x, 3)),
                         ("year", lambda x: month_start(x, 12)), ("week", week_start),
                         ("day", lambda x: x // 86400 * 86400), ("1h", lambda x: x // 3600 * 3600)):
        got = rows(cur, f"SELECT DATE_HISTOGRAM(ts, {{calendar_interval='{interval}'}}) AS m, COUNT(*) FROM {t} "
                        f"GROUP BY m ORDER BY m ASC LIMIT 10000")
        assert got == counts(fn(x) for x in T), interval
    got = rows(cur, f"SELECT DATE_HISTOGRAM(ts, {{fixed_interval='36h'}}) AS m, COUNT(*) FROM {t} "
                    f"GROUP BY m ORDER BY m ASC LIMIT 10000")
    assert got == counts(x // (36 * 3600) * (36 * 3600) for x in T)
    # DATE_RANGE: RANGE's buckets with bounds in date math (UTC), each
    # range beside its bounds worked out by hand
    def at(*ymdhms):
        return calendar.timegm(ymdhms + (0,) * (6 - len(ymdhms)))
    ranges = [
        # a year, two months on, back to the month's start
        ("{range_to='2017||+2M/M'}", (None, at(2017, 3, 1))),
        # a Sunday and a week, back to its Monday; a date with a time
        ("{range_from='2017-03-05 10:20||+1w/w', range_to='2017-07-01T00:00||'}", (at(2017, 3, 6), at(2017, 7, 1))),
        # a day the month lacks: its last (Dec 31 + 2 months, Feb 29 + 1 year)
        ("{range_from='2016-12-31||+2M', range_to='2016-02-29||+1y+1M/M'}", (at(2017, 2, 28), at(2017, 3, 1))),
        # a month alone, hours, back to the hour
        ("{range_from='2017-05||-1d+36h/h', range_to='now+1d'}", (at(2017, 5, 1, 12), None)),
        # unix seconds, as RANGE's
        ("{range_from=1488326400}", (1488326400, None)),
    ]

    def drng(v):
        for k, (_, (a, b)) in enumerate(ranges):
            if (a is None or v >= a) and (b is None or v < b):
                return k
        return -1
    spec_d = ", ".join(r for r, _ in ranges)
    got = rows(cur, f"SELECT DATE_RANGE(ts, {spec_d}) AS r, COUNT(*) FROM {t} GROUP BY r ORDER BY r ASC")
    assert got == counts(drng(x) for x in T)
    assert len(got) >= 4, got  # the rows fall in most of the ranges
    # now: every row is within the last hundred years
    got = rows(cur, f"SELECT DATE_RANGE(ts, {{range_from='now-100y/d', range_to='now'}}) AS r, COUNT(*) FROM {t} GROUP BY r")
    assert got == [(0, len(T))]
    # as a FACET over a MATCH, and as a filter's alias
    cur.execute(f"SELECT id FROM {t} WHERE MATCH('red') LIMIT 1 FACET HISTOGRAM(price, {{hist_interval=250}}) AS h "
                f"ORDER BY FACET() ASC LIMIT 100")
    cur.nextset()
    assert list(cur.fetchall()) == counts(hist(d["price"], 250) for d in docs.values() if d["word"] == "red")
    got = rows(cur, f"SELECT id, HISTOGRAM(price, {{hist_interval=500}}) AS h FROM {t} WHERE h = 500 ORDER BY id ASC LIMIT 1000")
    assert [i for i, _ in got] == [i for i in sorted(docs) if hist(docs[i]["price"], 500) == 500]
    for sql, frag in [
        (f"SELECT HISTOGRAM(price) FROM {t}", "HISTOGRAM() takes a value and {hist_interval=N, hist_offset=M}"),
        (f"SELECT HISTOGRAM(price, {{hist_interval=0}}) FROM {t}", "hist_interval must be above 0"),
        (f"SELECT HISTOGRAM(price, {{hist_interval=10, hist_offset=10}}) FROM {t}", "hist_offset from 0 to below"),
        (f"SELECT HISTOGRAM(price, {{hist_interval='x'}}) FROM {t}", "option 'hist_interval' expects a number"),
        (f"SELECT HISTOGRAM(price, {{bins=10}}) FROM {t}", "HISTOGRAM() takes a value and"),
        (f"SELECT HISTOGRAM(title, {{hist_interval=10}}) FROM {t}", "HISTOGRAM() takes numbers: argument 1 is"),
        (f"SELECT RANGE(price) FROM {t}", "RANGE() takes a value and ranges"),
        (f"SELECT RANGE(price, {{range_from=5, range_to=5}}) FROM {t}", "each range needs range_from below range_to"),
        (f"SELECT RANGE(price, 5) FROM {t}", "RANGE() takes a value and ranges"),
        (f"SELECT DATE_HISTOGRAM(ts, {{calendar_interval='fortnight'}}) FROM {t}", "calendar_interval is minute, hour"),
        (f"SELECT DATE_HISTOGRAM(ts, {{fixed_interval='1M'}}) FROM {t}", "fixed_interval is a whole number of s, m, h or d"),
        (f"SELECT DATE_HISTOGRAM(ts, {{fixed_interval='0h'}}) FROM {t}", "fixed_interval is a whole number"),
        (f"SELECT DATE_HISTOGRAM(ts) FROM {t}", "DATE_HISTOGRAM() takes a time and"),
        (f"SELECT DATE_RANGE(ts) FROM {t}", "DATE_RANGE() takes a time and ranges"),
        (f"SELECT DATE_RANGE(title, {{range_to='now'}}) FROM {t}", "DATE_RANGE() takes numbers: argument 1 is"),
        (f"SELECT DATE_RANGE(ts, {{range_to='2017-02-30||'}}) FROM {t}",
         "DATE_RANGE(): range_to: expected a date as YYYY, YYYY-MM, YYYY-MM-DD or YYYY-MM-DD HH:MM[:SS] before || "
         "in '2017-02-30||' at offset 0"),
        (f"SELECT DATE_RANGE(ts, {{range_to='now-1q'}}) FROM {t}",
         "range_to: expected a unit: s, m, h, d, w, M or y in 'now-1q' at offset 5"),
        (f"SELECT DATE_RANGE(ts, {{range_to='now-M'}}) FROM {t}", "expected a whole number (up to 1000000) after + or -"),
        (f"SELECT DATE_RANGE(ts, {{range_to='now 1d'}}) FROM {t}", "expected +N, -N or / and a unit in 'now 1d' at offset 3"),
        (f"SELECT DATE_RANGE(ts, {{range_from='now', range_to='now-1s'}}) FROM {t}",
         "each range needs range_from before range_to"),
        (f"SELECT DATE_RANGE(ts, {{range_from='now', until='now'}}) FROM {t}", "DATE_RANGE() takes a time and ranges"),
    ]:
        expect_error(cur, sql, 1064, re.escape(frag))


def test_bucket_aggregations_over_http(http, cur, uniq):
    docs = _model(seed=4)
    t = uniq()
    _load(cur, t, docs)

    def search(body):
        st, _, data = http("/search", json.dumps(dict(body, table=t)).encode())
        return st, json.loads(data)

    st, ans = search({"query": {"match": {"title": "blue"}}, "limit": 0, "aggs": {
        "h": {"histogram": {"field": "price", "interval": 200, "offset": 50}},
        "hk": {"histogram": {"field": "price", "interval": 500, "keyed": True}},
        "r": {"range": {"field": "price", "ranges": [{"to": 99}, {"from": 99, "to": 550.5}, {"from": 550.5},
                                                      {"from": 5000, "to": 6000}]}},
        "rk": {"range": {"field": "price", "keyed": True, "ranges": [{"from": 100, "to": 399}, {"from": 399}]}},
        "m": {"date_histogram": {"field": "ts", "calendar_interval": "month"}},
        "dk": {"date_histogram": {"field": "ts", "fixed_interval": "30d", "keyed": True}},
        "brand": {"terms": {"field": "price", "size": 2}, "sort": [{"price": "asc"}]}}})
    assert st == 200, ans
    blue = [d for d in docs.values() if d["word"] == "blue"]
    ag = ans["aggregations"]
    assert [(b["key"], b["doc_count"]) for b in ag["h"]["buckets"]] == counts(hist(d["price"], 200, 50) for d in blue)
    assert ag["hk"]["buckets"] == {str(k): {"key": k, "doc_count": c} for k, c in counts(hist(d["price"], 500) for d in blue)}

    def in_range(v, a, b):
        return (a is None or v >= a) and (b is None or v < b)
    edges = [(None, 99, "*-99"), (99, 550.5, "99-550.5"), (550.5, None, "550.5-*"), (5000, 6000, "5000-6000")]

    def first(v):  # a value counts in the first range that holds it
        return next((k for k, (a, b, _) in enumerate(edges) if in_range(v, a, b)), -1)
    want = []
    for k, (a, b, key) in enumerate(edges):
        bucket = {"key": key}
        if a is not None:
            bucket["from"] = a
        if b is not None:
            bucket["to"] = b
        bucket["doc_count"] = sum(1 for d in blue if first(d["price"]) == k)
        want.append(bucket)
    assert ag["r"]["buckets"] == want
    assert ag["rk"]["buckets"] == {"100-399": {"from": 100, "to": 399, "doc_count": sum(1 for d in blue if 100 <= d["price"] < 399)},
                                   "399-*": {"from": 399, "doc_count": sum(1 for d in blue if d["price"] >= 399)}}

    def iso(ts):
        return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    assert ag["m"]["buckets"] == [{"key": k, "key_as_string": iso(k), "doc_count": c}
                                  for k, c in counts(month_start(d["ts"]) for d in blue)]
    step = 30 * 86400
    assert ag["dk"]["buckets"] == {iso(k): {"key": k, "key_as_string": iso(k), "doc_count": c}
                                   for k, c in counts(d["ts"] // step * step for d in blue)}
    assert [b["key"] for b in ag["brand"]["buckets"]] == sorted({d["price"] for d in blue})[:2]
    # date_range: bounds in date math or unix seconds, resolved in the answer
    mar, jun = calendar.timegm((2017, 3, 1, 0, 0, 0)), calendar.timegm((2017, 6, 1, 0, 0, 0))
    st, ans = search({"query": {"match": {"title": "blue"}}, "limit": 0, "aggs": {
        "dr": {"date_range": {"field": "ts", "ranges": [{"to": "2017||+2M/M"}, {"from": "2017||+2M/M", "to": jun},
                                                        {"from": "2017-06-01||", "to": "now+1d/d"}]}},
        "drk": {"date_range": {"field": "ts", "keyed": True, "ranges": [{"from": "2017-03||"}]}}}})
    assert st == 200, ans
    tomorrow = (int(time.time()) // 86400 + 1) * 86400
    got = ans["aggregations"]["dr"]["buckets"]
    assert abs(got[2]["to"] - tomorrow) <= 86400, got  # now: the request's
    tomorrow = got[2]["to"]
    assert got == [
        {"key": "*-" + iso(mar), "to": mar, "to_as_string": iso(mar),
         "doc_count": sum(1 for d in blue if d["ts"] < mar)},
        {"key": iso(mar) + "-" + iso(jun), "from": mar, "from_as_string": iso(mar), "to": jun, "to_as_string": iso(jun),
         "doc_count": sum(1 for d in blue if mar <= d["ts"] < jun)},
        {"key": iso(jun) + "-" + iso(tomorrow), "from": jun, "from_as_string": iso(jun), "to": tomorrow,
         "to_as_string": iso(tomorrow), "doc_count": sum(1 for d in blue if jun <= d["ts"] < tomorrow)}]
    assert ans["aggregations"]["drk"]["buckets"] == {
        iso(mar) + "-*": {"from": mar, "from_as_string": iso(mar), "doc_count": sum(1 for d in blue if d["ts"] >= mar)}}
    # the same buckets as DATE_RANGE() in SQL
    got_sql = rows(cur, f"SELECT DATE_RANGE(ts, {{range_to='2017||+2M/M'}}, {{range_from='2017||+2M/M', range_to={jun}}}, "
                        f"{{range_from='2017-06-01||', range_to={tomorrow}}}) AS r, COUNT(*) FROM {t} "
                        f"WHERE MATCH('blue') GROUP BY r ORDER BY r ASC")
    assert [c for r, c in got_sql if r >= 0] == [b["doc_count"] for b in got if b["doc_count"]]
    # a row without the field is in no histogram bucket (it is in terms' NULL one)
    cur.execute(f"INSERT INTO {t} (id, title) VALUES (100000, 'blue')")
    st, ans = search({"query": {"match": {"title": "blue"}}, "limit": 0, "aggs": {
        "h": {"histogram": {"field": "price", "interval": 200, "offset": 50}},
        "m": {"date_histogram": {"field": "ts", "calendar_interval": "month", "keyed": True}},
        "r": {"range": {"field": "price", "ranges": [{"to": 99}]}}}})
    assert st == 200, ans
    assert [(b["key"], b["doc_count"]) for b in ans["aggregations"]["h"]["buckets"]] == \
        counts(hist(d["price"], 200, 50) for d in blue)
    assert len(ans["aggregations"]["m"]["buckets"]) == len(ag["m"]["buckets"])
    assert ans["aggregations"]["r"]["buckets"][0]["doc_count"] == sum(1 for d in blue if d["price"] < 99)
    for aggs, frag in [
        ({"h": {"histogram": {"field": "price"}}}, "histogram needs an interval above 0"),
        ({"h": {"histogram": {"field": "price", "interval": 10, "offset": 10}}}, "offset is from 0 to below its interval"),
        ({"h": {"histogram": {"field": "price", "interval": 10, "size": 3}}}, "histogram takes no 'size'"),
        ({"h": {"histogram": {"interval": 10}}}, "histogram needs a \"field\""),
        ({"h": {"histogram": {"field": "price", "interval": 10}, "sort": [{"_key": "asc"}]}}, "takes no sort or other key"),
        ({"h": {"range": {"field": "price", "ranges": []}}}, "range needs \"ranges\""),
        ({"h": {"range": {"field": "price", "ranges": [{"from": 5, "to": 1}]}}}, "range 1 takes {\"from\": a, \"to\": b}"),
        ({"h": {"range": {"field": "price", "ranges": [{"from": "a"}]}}}, "range 1 takes"),
        ({"h": {"range": {"field": "price", "ranges": [{"to": 1}], "keyed": "yes"}}}, "keyed is true or false"),
        ({"h": {"date_histogram": {"field": "ts"}}}, "date_histogram needs calendar_interval"),
        ({"h": {"date_histogram": {"field": "ts", "calendar_interval": "x'y"}}}, "date_histogram needs calendar_interval"),
        ({"h": {"date_histogram": {"field": "ts", "calendar_interval": "fortnight"}}}, "calendar_interval is minute, hour"),
        ({"h": {"avg": {"field": "price"}}}, "or a histogram, range, date_histogram or date_range"),
        ({"h": {"date_range": {"field": "ts", "ranges": [{"to": "2017||+2q"}]}}},
         "date_range 1: to: expected a unit: s, m, h, d, w, M or y in '2017||+2q'"),
        ({"h": {"date_range": {"field": "ts", "ranges": [{"from": True}]}}},
         "date_range 1: from: expected date math (\"now-1M/M\") or unix seconds"),
        ({"h": {"date_range": {"field": "ts", "ranges": [{"from": "now", "to": "now-1d"}]}}},
         "date_range 1 takes {\"from\": a, \"to\": b} (date math or unix seconds, a before b"),
        ({"h": {"date_range": {"field": "ts", "ranges": [{"from": "now"}], "interval": 3}}}, "date_range takes no 'interval'"),
        ({"h": {"date_range": {"field": "ts"}}}, "date_range needs \"ranges\""),
    ]:
        st, ans = search({"limit": 0, "aggs": aggs})
        assert st == 400 and frag in ans["error"]["reason"], (aggs, ans)
