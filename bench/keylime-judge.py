#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Judges each entry of an IMA ascii measurement list with keylime's own verifier code (KEYLIME_SRC on PYTHONPATH) against a runtime policy: one line per entry, "N PASS|FAIL PATH"."""
import os
import sys

# keylime is not part of this repository: its checkout must be on PYTHONPATH.
from keylime.common.algorithms import Hash
from keylime.ima import file_signatures, ima

# KEYLIME_JUDGE_DEBUG=1: each refused entry's line also names keylime's failure events.
DEBUG = os.environ.get("KEYLIME_JUDGE_DEBUG")


def main(policy_path, list_path):
    with open(policy_path, encoding="utf-8") as f:
        policy = ima.deserialize_runtime_policy(f.read())
    if policy is None:
        sys.exit(f"keylime-judge: {policy_path}: no runtime policy")
    # The verifier's keyrings: the policy's verification keys, then the keys the list
    # itself loads (ima-buf entries the policy allows), which later entries may use.
    keyrings = file_signatures.ImaKeyrings()
    keyrings.set_tenant_keyring(file_signatures.ImaKeyring.from_string(policy["verification-keys"]))
    with open(list_path, encoding="utf-8") as f:
        lines = [line for line in f.read().split("\n") if line]
    # The verifier takes boot_aggregate from the quoted PCRs 0-9; there is no TPM here,
    # so the list's own value stands in for a quote that proves it.
    boot = [line.split(" ")[3].split(":")[-1] for line in lines if line.split(" ")[4:5] == ["boot_aggregate"]]
    aggregates = {"sha256": boot[:1], "sha1": boot[:1]}
    for n, line in enumerate(lines, 1):
        # One entry at a time through the verifier's list processing, so that every
        # entry gets its own verdict (the verifier sums them into one failure).
        _, failure = ima.process_measurement_list(
            None, [line], policy, ima_keyrings=keyrings, boot_aggregates=aggregates, hash_alg=Hash.SHA1
        )
        fields = line.split(" ")
        path = fields[4] if len(fields) > 4 else "?"
        events = [e.event_id for e in failure.events] if DEBUG else []
        print(n, "FAIL" if failure.events else "PASS", path, *events)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: keylime-judge.py POLICY LIST")
    main(sys.argv[1], sys.argv[2])
