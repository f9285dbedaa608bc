/*
** jsonpath.h — a property of a JSON document, read from its text.
**
** Contract. json_path_value() follows a path of steps (an object's key, or
** an array's index) into the JSON text z[0..n) (a value as a JSON column
** keeps it: valid JSON, compact or not) and returns what is there as a
** Value: a string (its unescaped text), a number (VAL_INT when it is an
** integer that fits int64, else VAL_FLOAT), true and false as 1 and 0, an
** object or an array as its JSON text, and VAL_NULL for JSON's null, for a
** path that leads nowhere (a missing key, an index past the end, a step
** into a scalar), and for text that is not JSON where the walk needs it
** to be. Nothing is parsed beyond what the path passes through, and
** nothing is allocated unless a string holds escapes; then its unescaped
** copy is made in the arena a (NULL without one: the value is VAL_NULL).
** Returned strings otherwise point into z. Thread-safe.
*/
#ifndef LP_QUERY_JSONPATH_H
#define LP_QUERY_JSONPATH_H

#include <stddef.h>
#include <stdint.h>

#include "table/value.h"
#include "util/arena.h"

typedef struct JsonStep {
    const char *zKey;       /* an object's key (bytes as written, unescaped), or NULL: ... */
    uint32_t nKey;
    int64_t iIndex;         /* ... an array's index, from 0 */
} JsonStep;

Value json_path_value(const char *z, size_t n, const JsonStep *aStep, int nStep, Arena *a);

/* The elements of the JSON array whose text is z[0..n), in order:
** json_iter_init says whether it is one (leading and trailing space
** allowed); each json_iter_next gives the next element as json_path_value
** would, 0 at the end or where the text stops being JSON. */
typedef struct JsonIter {
    const char *z;
    size_t n, i;
} JsonIter;
int json_iter_init(JsonIter *it, const char *z, size_t n);
int json_iter_next(JsonIter *it, Arena *a, Value *pv);

#endif /* LP_QUERY_JSONPATH_H */
