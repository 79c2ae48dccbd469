#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks runtime policies by keylime's rules: keylime-policy.schema.json, the keyring inside verification-keys, and the excludes as Python's re compiles them."""
import json
import re
import sys

import jsonschema


def problem(schema, path):
    """Why keylime would refuse the policy at @path, or None."""
    try:
        with open(path, encoding="utf-8") as f:
            policy = json.load(f)
    except (ValueError, UnicodeDecodeError) as e:
        return f"not JSON: {e}"
    try:
        jsonschema.validate(policy, schema)
        keys = policy["verification-keys"]
        if keys:
            keyring = {"$defs": schema["$defs"], "$ref": "#/$defs/keyring"}
            jsonschema.validate(json.loads(keys), keyring)
    except (jsonschema.ValidationError, ValueError) as e:
        return str(e).split("\n", 1)[0]
    # The verifier joins the excludes into one pattern; one Python cannot compile
    # makes it ignore them all.
    if policy["excludes"]:
        try:
            re.compile("(" + ")|(".join(policy["excludes"]) + ")")
        except re.error as e:
            return f"excludes: {e}"
    return None


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.validators.validator_for(schema).check_schema(schema)
    bad = 0
    for path in sys.argv[2:]:
        why = problem(schema, path)
        print(f"{path}: {'OK' if why is None else 'REFUSED: ' + why}")
        bad += why is not None
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
