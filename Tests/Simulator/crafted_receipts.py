"""App receipts crafted to cost their verifier as much as they can before any signature or chain check, as
Tests/AppReceiptTests/CraftedReceipts.swift makes them: BER a parser turns into many nodes, and a genuine receipt
padded where its signature does not reach. For the end-to-end tests and scripts/fuzz.

    python3 Tests/Simulator/crafted_receipts.py empty-pieces COUNT OUT
    python3 Tests/Simulator/crafted_receipts.py certificate-copies GENUINE_DER COPIES OUT
"""
import sys

import receipt_asn1 as asn1

__all__ = ["empty_pieces", "certificate_copies"]

SIGNED_DATA = asn1.oid("1.2.840.113549.1.7.2")
DATA = asn1.oid("1.2.840.113549.1.7.1")


def _indefinite(tag, body):
    return bytes([tag, 0x80]) + body + b"\x00\x00"


def empty_pieces(count):
    """No signature and no certificate: a SignedData whose content, in BER with indefinite lengths, is split into
    `count` empty pieces (525,000 of them make 1.05 MB)."""
    content = _indefinite(asn1.SEQUENCE, DATA + _indefinite(0xA0, _indefinite(0x24, b"\x04\x00" * count)))
    signed_data = _indefinite(asn1.SEQUENCE, asn1.integer(1) + b"\x31\x00" + content + b"\x31\x00")
    return _indefinite(asn1.SEQUENCE, SIGNED_DATA + _indefinite(0xA0, signed_data))


def certificate_copies(genuine, copies):
    """`genuine` (DER) with its certificate set repeated `copies` times: the signature does not cover it."""
    content_info = asn1.read(genuine)
    fields = content_info.expect(asn1.SEQUENCE, 2)[1].children[0].expect(asn1.SEQUENCE, 4)
    body = b"".join(
        asn1.tlv(0xA0, field.body * copies) if field.tag == 0xA0 else field.encoded for field in fields)
    return asn1.tlv(asn1.SEQUENCE, SIGNED_DATA + asn1.tlv(0xA0, asn1.tlv(asn1.SEQUENCE, body)))


def main(argv):
    if len(argv) == 4 and argv[1] == "empty-pieces":
        crafted, out = empty_pieces(int(argv[2])), argv[3]
    elif len(argv) == 5 and argv[1] == "certificate-copies":
        with open(argv[2], "rb") as genuine:
            crafted, out = certificate_copies(genuine.read(), int(argv[3])), argv[4]
    else:
        sys.exit(__doc__)
    with open(out, "wb") as file:
        file.write(crafted)


if __name__ == "__main__":
    main(sys.argv)
