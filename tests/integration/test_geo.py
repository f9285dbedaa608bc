"""Geo search, as Manticore's: GEODIST() in SQL, a WHERE that filters on a
select-list alias (`GEODIST(...) AS d ... WHERE d < 1000`), and /search's
geo_distance filter and _geo_distance sort. Distances are checked against
GeographicLib's geodesic on the WGS84 ellipsoid (Debian's
python3-geographiclib), and the haversine method against the spherical
formula it names."""

import json
import math
import random
import re
import struct

from geographiclib.geodesic import Geodesic

from helpers import expect_error, rows

R_MEAN = 6371008.8
UNITS = {"m": 1, "km": 1e-3, "mi": 1 / 1609.344, "ft": 1 / 0.3048, "nmi": 1 / 1852, "yd": 1 / 0.9144}


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def geodesic_m(la1, lo1, la2, lo2):
    return Geodesic.WGS84.Inverse(la1, lo1, la2, lo2)["s12"]


def haversine_m(la1, lo1, la2, lo2):
    la1, lo1, la2, lo2 = map(math.radians, (la1, lo1, la2, lo2))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * R_MEAN * math.asin(min(1.0, math.sqrt(h)))


def _places(seed=5, n=120):
    """Points spread over the globe, and a cluster around one anchor."""
    rnd = random.Random(seed)
    pts = {}
    for i in range(1, n + 1):
        if i % 3 == 0:  # near the anchor: metres to tens of kilometres away
            la, lo = 52.396 + rnd.uniform(-0.3, 0.3), -1.774 + rnd.uniform(-0.3, 0.3)
        else:
            la, lo = rnd.uniform(-89, 89), rnd.uniform(-179.9, 179.9)
        pts[i] = (f32(la), f32(lo))  # as the FLOAT columns keep them
    return pts


ANCHOR = (52.396, -1.774)


def _load(cur, t, pts):
    cur.execute(f"CREATE TABLE {t} (name TEXT, kind INT, lat FLOAT, lon FLOAT, rlat FLOAT, rlon FLOAT)")
    vals = ", ".join(f"({i}, 'place {i % 4}', {i % 4}, {la!r}, {lo!r}, {math.radians(la)!r}, {math.radians(lo)!r})"
                     for i, (la, lo) in pts.items())
    cur.execute(f"INSERT INTO {t} (id, name, kind, lat, lon, rlat, rlon) VALUES {vals}")


def test_geodist_against_geographiclib(cur, uniq):
    pts = _places()
    t = uniq()
    _load(cur, t, pts)
    # adaptive (the default): the ellipsoid; within 1e-4 of the geodesic everywhere, 1 cm near by
    got = dict(rows(cur, f"SELECT id, GEODIST({ANCHOR[0]}, {ANCHOR[1]}, lat, lon, {{in=degrees, out=m}}) "
                         f"FROM {t} LIMIT 1000"))
    worst = 0
    for i, (la, lo) in pts.items():
        want = geodesic_m(ANCHOR[0], ANCHOR[1], la, lo)
        assert abs(got[i] - want) <= max(1e-4 * want, 0.01), (i, got[i], want)
        if want < 100000:
            assert abs(got[i] - want) <= 0.01 + 2e-6 * want, (i, got[i], want)
        worst = max(worst, abs(got[i] - want) / max(want, 1))
    assert worst > 0  # not a copy of the reference: Lambert's formula differs a little far away
    # haversine: the sphere; and each unit
    for unit, k in UNITS.items():
        got = dict(rows(cur, f"SELECT id, GEODIST(lat, lon, {ANCHOR[0]}, {ANCHOR[1]}, "
                             f"{{in=deg, out={unit}, method=haversine}}) FROM {t} LIMIT 1000"))
        for i, (la, lo) in pts.items():
            want = haversine_m(la, lo, *ANCHOR) * k
            assert math.isclose(got[i], want, rel_tol=1e-9, abs_tol=1e-6), (unit, i, got[i], want)
    # radians by default (the columns in radians give the same distances)
    got = dict(rows(cur, f"SELECT id, GEODIST(rlat, rlon, {math.radians(ANCHOR[0])!r}, {math.radians(ANCHOR[1])!r}) "
                         f"FROM {t} LIMIT 1000"))
    for i, (la, lo) in pts.items():
        want = geodesic_m(*ANCHOR, la, lo)
        assert abs(got[i] - want) <= max(1e-4 * want, 0.5), (i, got[i], want)
    # constants: the same point is 0, the poles half a meridian apart
    assert rows(cur, "SELECT GEODIST(10, 20, 10, 20, {in=degrees})") == [(0.0,)]
    (pole,), = rows(cur, "SELECT GEODIST(90, 0, -90, 0, {in=degrees, out=km})")
    assert abs(pole - 2 * 10001.965729) < 1.0, pole
    (anti,), = rows(cur, "SELECT GEODIST(0, 0, 0, 180, {in=degrees})")
    assert math.isfinite(anti) and 19.9e6 < anti < 20.1e6, anti
    assert rows(cur, "SELECT GEODIST(NULL, 0, 0, 0)") == [(None,)]


def test_where_on_an_alias_and_order_by_distance(cur, uniq):
    """Manticore's way to filter on a computed value: name it in the select
    list and filter on the name; here a radius search, nearest first, with
    MATCH beside it."""
    pts = _places(seed=9)
    t = uniq()
    _load(cur, t, pts)
    dist = {i: geodesic_m(*ANCHOR, la, lo) for i, (la, lo) in pts.items()}
    for radius in (5000, 25000, 3e6):
        got = rows(cur, f"SELECT id, GEODIST({ANCHOR[0]}, {ANCHOR[1]}, lat, lon, {{in=degrees}}) AS d FROM {t} "
                        f"WHERE d < {radius} ORDER BY d ASC LIMIT 1000")
        want = sorted((i for i in pts if dist[i] < radius), key=lambda i: dist[i])
        # (a point within a centimetre of the radius could fall either way)
        assert [i for i, _ in got] == [i for i in want if abs(dist[i] - radius) > 0.01]
    got = rows(cur, f"SELECT id, GEODIST({ANCHOR[0]}, {ANCHOR[1]}, lat, lon, {{in=degrees, out=km}}) AS km "
                    f"FROM {t} WHERE MATCH('place 2') AND km < 30 ORDER BY km ASC, id ASC LIMIT 1000")
    want = sorted((i for i in pts if i % 4 == 2 and dist[i] < 30000), key=lambda i: (dist[i], i))
    assert [i for i, _ in got] == want
    # any expression's alias, and in a grouped query
    got = rows(cur, f"SELECT id, lat * 2 AS dbl FROM {t} WHERE dbl > 100 OR dbl < -170 ORDER BY id ASC LIMIT 1000")
    assert [r[0] for r in got] == [i for i in sorted(pts) if pts[i][0] * 2 > 100 or pts[i][0] * 2 < -170]
    got = rows(cur, f"SELECT kind, COUNT(*), GEODIST({ANCHOR[0]}, {ANCHOR[1]}, lat, lon, {{in=degrees}}) AS d "
                    f"FROM {t} WHERE d < 50000 GROUP BY kind ORDER BY kind ASC")
    counts = {}
    for i in pts:
        if dist[i] < 50000:
            counts[i % 4] = counts.get(i % 4, 0) + 1
    assert [(n, c) for n, c, _ in got] == sorted(counts.items())
    # a column's name stays the column's
    assert rows(cur, f"SELECT id, -lat AS lat FROM {t} WHERE lat > 88 ORDER BY id ASC") == \
        [(i, -pts[i][0]) for i in sorted(pts) if pts[i][0] > 88]
    for sql, errno, frag in [
        (f"SELECT kind, COUNT(*) AS c FROM {t} WHERE c > 1 GROUP BY kind", 1064,
         "'c' is an aggregate of the groups: filter it with HAVING, not WHERE"),
        (f"SELECT id, b AS a, a AS b FROM {t} WHERE a > 1", 1054, "unknown column 'b'"),
        (f"SELECT id FROM {t} WHERE nope > 1", 1054, "unknown column 'nope'"),
        (f"SELECT GEODIST(1, 2, 3) FROM {t}", 1064, "GEODIST() takes two points and options"),
        (f"SELECT GEODIST(lat, lon, 1, name) FROM {t}", 1064, "GEODIST() takes numbers: argument 4 is"),
        (f"SELECT GEODIST(lat, lon, 1, 2, {{in=grads}}) FROM {t}", 1064, "in is deg, degrees, rad or radians"),
        (f"SELECT GEODIST(lat, lon, 1, 2, {{out=parsec}}) FROM {t}", 1064, "out is m, km, ft, mi, yd, in, cm, mm or nmi"),
        (f"SELECT GEODIST(lat, lon, 1, 2, {{method=vincenty}}) FROM {t}", 1064, "method is adaptive or haversine"),
        (f"SELECT GEODIST(lat, lon, 1, 2, {{units=km}}) FROM {t}", 1064, "unknown option: expected in, out or method"),
        (f"SELECT GEODIST(lat, lon, 1, 2, 3) FROM {t}", 1064, "expected {in=..., out=..., method=...}"),
    ]:
        expect_error(cur, sql, errno, re.escape(frag))


def test_geo_distance_over_http(http, cur, uniq):
    pts = _places(seed=13)
    t = uniq()
    _load(cur, t, pts)
    dist = {i: geodesic_m(*ANCHOR, la, lo) for i, (la, lo) in pts.items()}

    def search(body):
        st, _, data = http("/search", json.dumps(dict(body, table=t, limit=1000)).encode())
        return st, json.loads(data)

    forms = [({"lat": ANCHOR[0], "lon": ANCHOR[1]}, "lat, lon"), (f"{ANCHOR[0]}, {ANCHOR[1]}", ["lon", "lat"]),
             ([ANCHOR[1], ANCHOR[0]], {"lat": "lat", "lon": "lon"})]
    for (anchor, source), dtext, metres in zip(forms, ("20 km", "20000", 12500), (20000, 20000, 12500)):
        st, ans = search({"query": {"geo_distance": {"location_anchor": anchor, "location_source": source,
                                                     "distance": dtext}},
                          "sort": [{"_geo_distance": {"location_anchor": anchor, "location_source": source}}]})
        assert st == 200, ans
        want = sorted((i for i in pts if dist[i] <= metres and abs(dist[i] - metres) > 0.01), key=lambda i: dist[i])
        assert [h["_id"] for h in ans["hits"]["hits"]] == want, (anchor, source, dtext)
    # inside a bool with a full-text query; haversine; farthest first
    st, ans = search({"query": {"bool": {"must": [{"match": {"name": "place"}},
                                                   {"geo_distance": {"location_anchor": {"lat": ANCHOR[0], "lon": ANCHOR[1]},
                                                                     "location_source": "lat,lon", "distance": "3000 mi",
                                                                     "distance_type": "haversine"}}]}},
                      "sort": [{"_geo_distance": {"location_anchor": {"lat": ANCHOR[0], "lon": ANCHOR[1]},
                                                  "location_source": "lat,lon", "order": "desc"}}]})
    assert st == 200, ans
    hv = {i: haversine_m(la, lo, *ANCHOR) for i, (la, lo) in pts.items()}
    limit = 3000 * 1609.344
    want = sorted((i for i in pts if hv[i] <= limit and abs(hv[i] - limit) > 0.01), key=lambda i: -dist[i])
    assert [h["_id"] for h in ans["hits"]["hits"]] == want
    for body, frag in [
        ({"geo_distance": {"location_anchor": {"lat": 1}, "location_source": "lat, lon", "distance": 1}}, "location_anchor takes"),
        ({"geo_distance": {"location_anchor": [1, 2], "location_source": "lat; lon", "distance": 1}}, "location_source takes"),
        ({"geo_distance": {"location_anchor": [1, 2], "location_source": "lat, lon", "distance": "5 parsecs"}}, "unknown unit 'parsecs'"),
        ({"geo_distance": {"location_anchor": [1, 2], "location_source": "lat, lon", "distance": -1}}, "the distance must be 0 or more"),
        ({"geo_distance": {"location_anchor": [1, 2], "location_source": "lat, lon"}}, "needs location_anchor, location_source and distance"),
        ({"geo_distance": {"location_anchor": [1, 2], "location_source": "lat, lon", "distance": 1, "distance_type": "x"}},
         "unknown or bad key 'distance_type'"),
        ({"geo_distance": {"location_anchor": ["a", 2], "location_source": "lat, lon", "distance": 1}}, "location_anchor takes"),
        ({"geo_distance": {"location_anchor": [1, 2], "location_source": "lat, nope", "distance": 1}}, "unknown column 'nope'"),
    ]:
        st, ans = search({"query": body})
        assert st == 400 and frag in ans["error"]["reason"], (body, ans)


def test_contains_poly2d_and_geopoly2d(cur, uniq):
    """CONTAINS(POLY2D(...), x, y) on the plane (even-odd: a concave shape's
    notch is outside), and CONTAINS(GEOPOLY2D(...), lat, lon) whose edges
    follow the great circles: north of a parallel edge's ends but south of
    the great circle between them is inside, as on the globe."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (name TEXT, x FLOAT, y FLOAT)")
    # an L: (0,0) (10,0) (10,4) (4,4) (4,10) (0,10); its notch is x > 4 and y > 4
    pts = {1: (2, 2), 2: (8, 2), 3: (2, 8), 4: (8, 8), 5: (11, 2), 6: (-1, 5), 7: (3.9, 9.9), 8: (5, 4.1)}
    cur.execute(f"INSERT INTO {t} (id, name, x, y) VALUES " +
                ", ".join(f"({i}, 'p', {x}, {y})" for i, (x, y) in pts.items()))
    poly = "POLY2D(0, 0, 10, 0, 10, 4, 4, 4, 4, 10, 0, 10)"
    assert rows(cur, f"SELECT id, CONTAINS({poly}, x, y) AS inside FROM {t} WHERE inside = 1 ORDER BY id ASC") == \
        [(1, 1), (2, 1), (3, 1), (7, 1)]
    # GEOPOLY2D: Manticore's example, and the great circle's bulge north of 42.21211 at mid-longitude
    box = "42.21211, -73.999, 42.21211, -76.123, 40.76439, -76.123, 40.76439, -73.9997"
    for (la, lo), geo, flat in [((41.5445, -74.973), 1, 1), ((42.2150, -75.061), 1, 0), ((42.2185, -75.061), 0, 0),
                                ((40.0, -75.0), 0, 0)]:
        assert rows(cur, f"SELECT CONTAINS(GEOPOLY2D({box}), {la}, {lo}), CONTAINS(POLY2D({box}), {la}, {lo})") == \
            [(geo, flat)], (la, lo)
    assert rows(cur, "SELECT CONTAINS(POLY2D(0, 0, 1, 0, 0, 1), NULL, 0)") == [(None,)]
    for sql, frag in [
        ("SELECT CONTAINS(POLY2D(0, 0, 1, 1), 0, 0)", "a polygon takes three points or more"),
        ("SELECT CONTAINS(POLY2D(0, 0, 1, 1, 2), 0, 0)", "a polygon takes three points or more"),
        (f"SELECT CONTAINS(POLY2D(0, 0, 1, 1, 2, x), 0, 0) FROM {t}", "a polygon's coordinates are constant numbers"),
        ("SELECT CONTAINS(GEOPOLY2D(0, 0, 91, 0, 1, 1), 0, 0)", "GEOPOLY2D() takes degrees"),
        ("SELECT CONTAINS(1, 2, 3)", "CONTAINS() takes a polygon and a point"),
        (f"SELECT CONTAINS(POLY2D(0, 0, 1, 0, 0, 1), name, 1) FROM {t}", "CONTAINS() takes numbers: argument 2 is STRING column 'name'"),
        ("SELECT POLY2D(0, 0, 1, 0, 0, 1)", "POLY2D() and GEOPOLY2D() make a polygon for CONTAINS()"),
    ]:
        expect_error(cur, sql, 1064, re.escape(frag))
