#!/usr/bin/env python3
"""A validator for the subset of JSON Schema (draft 2020-12 keywords) that
doc/report.schema.json uses: type, properties, required,
additionalProperties (boolean or schema), items, enum, const, minimum,
maximum, pattern, anyOf.  No network, no jsonschema module.

  jsonschema_mini.py SCHEMA DOCUMENT   exit 1 naming the first violation
"""
import json
import re
import sys

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
KNOWN = {"$schema", "$id", "title", "description", "type", "properties", "required",
         "additionalProperties", "items", "enum", "const", "minimum", "maximum", "pattern", "anyOf"}


def check(schema, v, where="$"):
    unknown = set(schema) - KNOWN
    if unknown:
        raise SystemExit("schema uses keywords this validator does not know: %s" % sorted(unknown))
    t = schema.get("type")
    if t is not None:
        ts = t if isinstance(t, list) else [t]
        if not any(TYPES[x](v) for x in ts):
            return "%s: %r is not of type %s" % (where, v if not isinstance(v, (dict, list)) else type(v).__name__, t)
    if "const" in schema and v != schema["const"]:
        return "%s: %r is not %r" % (where, v, schema["const"])
    if "enum" in schema and v not in schema["enum"]:
        return "%s: %r is not one of %r" % (where, v, schema["enum"])
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if "minimum" in schema and v < schema["minimum"]:
            return "%s: %r < minimum %r" % (where, v, schema["minimum"])
        if "maximum" in schema and v > schema["maximum"]:
            return "%s: %r > maximum %r" % (where, v, schema["maximum"])
    if isinstance(v, str) and "pattern" in schema and not re.search(schema["pattern"], v):
        return "%s: %r does not match %r" % (where, v, schema["pattern"])
    if "anyOf" in schema:
        errs = [check(s, v, where) for s in schema["anyOf"]]
        if all(errs):
            return "%s: no alternative of anyOf matches (%s)" % (where, "; ".join(errs))
    if isinstance(v, dict):
        for k in schema.get("required", []):
            if k not in v:
                return "%s: required property %r missing" % (where, k)
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for k, x in v.items():
            if k in props:
                e = check(props[k], x, "%s.%s" % (where, k))
            elif extra is False:
                e = "%s: property %r not allowed" % (where, k)
            elif isinstance(extra, dict):
                e = check(extra, x, "%s.%s" % (where, k))
            else:
                e = None
            if e:
                return e
    if isinstance(v, list) and "items" in schema:
        for i, x in enumerate(v):
            e = check(schema["items"], x, "%s[%d]" % (where, i))
            if e:
                return e
    return None


def main():
    schema = json.load(open(sys.argv[1]))
    doc = json.load(open(sys.argv[2]))
    e = check(schema, doc)
    if e:
        print("%s: does not validate against %s: %s" % (sys.argv[2], sys.argv[1], e), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
