#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Writes an IMA measurement list (ascii and binary, as the kernel does) and what each entry extends into PCR 10.
"""Usage: ima-list-gen.py PCRS_SHA1 PCRS_SHA256 OUTDIR [NAME...]

PCRS_*: PCRs 0-9 of that bank (tpm2_pcrread -o, values), for boot_aggregate.
Writes OUTDIR/ascii (sha1 template hashes, as ascii_runtime_measurements),
OUTDIR/ascii-sha256 (as ascii_runtime_measurements_sha256), OUTDIR/binary and
OUTDIR/binary-sha256 (little-endian, as binary_runtime_measurements*), and
OUTDIR/extend: per entry, "SHA1 SHA256" to extend into PCR 10 (0xff.. for a violation).
NAMEs: files to measure as ima-ng entries, each with the sha256 of its own name.
The layout follows the kernel's ima_template_lib.c and ima_fs.c, written independently
of the C code under test."""
import hashlib
import struct
import sys


def le32(n):
    return struct.pack("<I", n)


def field(b):
    return le32(len(b)) + b


def d_ng(algo, digest):
    return field(algo.encode() + b":\0" + digest)


def n_ng(name):
    return field(name.encode() + b"\0")


class Entry:
    def __init__(self, template, ascii_data, data, binary_data=None, violation=False):
        self.template = template
        self.ascii_data = ascii_data
        self.data = data  # what the template hash covers
        self.binary_data = binary_data if binary_data is not None else field(data)
        self.violation = violation

    def thash(self, algo):
        if self.violation:
            return bytes(hashlib.new(algo).digest_size)
        return hashlib.new(algo, self.data).digest()

    def extend(self, algo):
        if self.violation:
            return b"\xff" * hashlib.new(algo).digest_size
        return self.thash(algo)


def ima_ng(name, digest, algo="sha256"):
    return Entry("ima-ng", f"{algo}:{digest.hex()} {name}", d_ng(algo, digest) + n_ng(name))


def main():
    pcrs1, pcrs256, out = sys.argv[1:4]
    names = sys.argv[4:]
    with open(pcrs256, "rb") as f:
        p256 = f.read()
    with open(pcrs1, "rb") as f:
        p1 = f.read()
    assert len(p256) == 10 * 32 and len(p1) == 10 * 20
    entries = [ima_ng("boot_aggregate", hashlib.sha256(p256).digest())]
    # ima-sig with a signature-shaped value, and one without.
    sig = bytes([3, 2, 4, 0x12, 0x34, 0x56, 0x78, 0, 4]) + b"\x01\x02\x03\x04"
    dig = hashlib.sha256(b"signed").digest()
    entries.append(Entry("ima-sig", f"sha256:{dig.hex()} /usr/bin/signed {sig.hex()}",
                         d_ng("sha256", dig) + n_ng("/usr/bin/signed") + field(sig)))
    dig = hashlib.sha256(b"unsigned").digest()
    entries.append(Entry("ima-sig", f"sha256:{dig.hex()} /usr/bin/unsigned ",
                         d_ng("sha256", dig) + n_ng("/usr/bin/unsigned") + field(b"")))
    # ima-buf: the kernel's command line.
    buf = b"root=/dev/vda ima_policy=tcb"
    dig = hashlib.sha256(buf).digest()
    entries.append(Entry("ima-buf", f"sha256:{dig.hex()} kexec-cmdline {buf.hex()}",
                         d_ng("sha256", dig) + n_ng("kexec-cmdline") + field(buf)))
    # A violation: zeros in the list, 0xff extended.
    e = ima_ng("/var/log/open-writers", bytes(32))
    e.violation = True
    entries.append(e)
    # The legacy ima template: SHA-1 and the name in 256 bytes; the binary list has the
    # digest without a length and the name with one, without its NUL.
    name = "/usr/lib/legacy"
    dig = hashlib.sha1(b"legacy").digest()
    padded = name.encode() + bytes(256 - len(name))
    entries.append(Entry("ima", f"{dig.hex()} {name}", dig + padded,
                         binary_data=dig + le32(len(name)) + name.encode()))
    # The named files last: a list with one name more is this one and an entry after it.
    for name in names:
        entries.append(ima_ng(name, hashlib.sha256(name.encode()).digest()))
    for suffix, algo in (("", "sha1"), ("-sha256", "sha256")):
        with open(f"{out}/ascii{suffix}", "w") as f:
            for e in entries:
                f.write(f"10 {e.thash(algo).hex()} {e.template} {e.ascii_data}\n")
        with open(f"{out}/binary{suffix}", "wb") as f:
            for e in entries:
                f.write(le32(10) + e.thash(algo) + field(e.template.encode()))
                f.write(e.binary_data)
    with open(f"{out}/extend", "w") as f:
        for e in entries:
            f.write(f"{e.extend('sha1').hex()} {e.extend('sha256').hex()}\n")


if __name__ == "__main__":
    main()
