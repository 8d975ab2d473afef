"""Just the ASN.1 that app receipts need: a writer (DER, or BER with indefinite lengths as Xcode writes) and a
tolerant reader of both. Neither checks a signature or a certificate: receipts.py leaves that to `cryptography`.
"""

__all__ = ["tlv", "integer", "oid", "Constructed", "Chunked", "encode", "read", "Element", "ASN1Error",
           "SEQUENCE", "SET", "OCTET_STRING", "UTF8_STRING", "IA5_STRING", "INTEGER", "OID", "NULL"]

INTEGER, OCTET_STRING, NULL, OID = 0x02, 0x04, 0x05, 0x06
UTF8_STRING, IA5_STRING = 0x0C, 0x16
SEQUENCE, SET = 0x30, 0x31
CONSTRUCTED = 0x20
MAX_DEPTH = 32
BER_CHUNK = 1000  # bytes per piece of a constructed OCTET STRING, in BER


class ASN1Error(ValueError):
    """Bytes that are not the ASN.1 expected: truncated, a bad length, too deep."""


# ---------- writing ----------

def _length(n):
    if n < 0x80:
        return bytes([n])
    octets = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(octets)]) + octets


def tlv(tag, body):
    """One element in DER."""
    return bytes([tag]) + _length(len(body)) + body


def integer(value):
    return tlv(INTEGER, value.to_bytes(value.bit_length() // 8 + 1, "big", signed=True))


def oid(dotted):
    first, second, *rest = (int(part) for part in dotted.split("."))
    body = bytearray([first * 40 + second])
    for arc in rest:
        chunk = [arc & 0x7F]
        arc >>= 7
        while arc:
            chunk.append(0x80 | (arc & 0x7F))
            arc >>= 7
        body.extend(reversed(chunk))
    return tlv(OID, bytes(body))


class Constructed:
    """A constructed element whose children are written by encode(): bytes (already DER), or more nodes."""
    __slots__ = ("tag", "children")

    def __init__(self, tag, *children):
        self.tag, self.children = tag, children


class Chunked:
    """An OCTET STRING: primitive in DER; in BER constructed (0x24, indefinite) of BER_CHUNK-byte pieces, as a
    streaming CMS encoder writes a receipt's content."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def encode(node, ber=False):
    """The bytes of a tree of Constructed, Chunked and bytes: DER, or BER with every Constructed of
    indefinite length."""
    if isinstance(node, bytes):
        return node
    if isinstance(node, Chunked):
        if not ber:
            return tlv(OCTET_STRING, node.value)
        pieces = [tlv(OCTET_STRING, node.value[i:i + BER_CHUNK]) for i in range(0, len(node.value), BER_CHUNK)]
        return bytes([OCTET_STRING | CONSTRUCTED, 0x80]) + b"".join(pieces) + b"\x00\x00"
    body = b"".join(encode(child, ber) for child in node.children)
    return bytes([node.tag, 0x80]) + body + b"\x00\x00" if ber else tlv(node.tag, body)


# ---------- reading ----------

class Element:
    """One element read from `data`: data[start:end] is all of it, data[body_start:body_end] its contents
    (without the end-of-contents octets of an indefinite length); `children` when constructed."""
    __slots__ = ("data", "tag", "start", "body_start", "body_end", "end", "children")

    def __init__(self, data, tag, start, body_start, body_end, end, children):
        self.data, self.tag, self.start = data, tag, start
        self.body_start, self.body_end, self.end, self.children = body_start, body_end, end, children

    @property
    def encoded(self):
        return self.data[self.start:self.end]

    @property
    def body(self):
        return self.data[self.body_start:self.body_end]

    def octets(self):
        """An OCTET STRING's value, primitive or constructed (its pieces joined)."""
        if self.tag == OCTET_STRING:
            return self.body
        if self.tag == OCTET_STRING | CONSTRUCTED:
            return b"".join(child.octets() for child in self.children)
        raise ASN1Error(f"expected an OCTET STRING, found tag 0x{self.tag:02x}")

    def integer(self):
        if self.tag != INTEGER or self.body_start == self.body_end:
            raise ASN1Error(f"expected an INTEGER, found tag 0x{self.tag:02x}")
        return int.from_bytes(self.body, "big", signed=True)

    def expect(self, tag, count=None):
        """Its children, after checking its tag (and that there are at least `count` of them)."""
        if self.tag != tag or self.children is None:
            raise ASN1Error(f"expected tag 0x{tag:02x}, found 0x{self.tag:02x}")
        if count is not None and len(self.children) < count:
            raise ASN1Error(f"tag 0x{tag:02x} has {len(self.children)} elements, expected {count}")
        return self.children


def read(data, position=0, whole=True):
    """The element at data[position]: DER, or BER with indefinite lengths. `whole`: nothing may follow it."""
    element = _read(data, position, 0)
    if whole and element.end != len(data):
        raise ASN1Error(f"{len(data) - element.end} bytes after the element")
    return element


def _read(data, position, depth):
    if depth > MAX_DEPTH:
        raise ASN1Error("nested too deep")
    if position + 2 > len(data):
        raise ASN1Error("truncated")
    tag, first = data[position], data[position + 1]
    if tag & 0x1F == 0x1F:
        raise ASN1Error("multi-byte tags are not used in receipts")
    constructed = bool(tag & CONSTRUCTED)
    cursor = position + 2
    if first == 0x80:
        if not constructed:
            raise ASN1Error("indefinite length on a primitive element")
        children = []
        while True:
            if cursor + 2 > len(data):
                raise ASN1Error("truncated")
            if data[cursor] == 0 and data[cursor + 1] == 0:
                return Element(data, tag, position, position + 2, cursor, cursor + 2, children)
            child = _read(data, cursor, depth + 1)
            children.append(child)
            cursor = child.end
    if first & 0x80:
        count = first & 0x7F
        if not 1 <= count <= 4 or cursor + count > len(data):
            raise ASN1Error("bad length")
        length = int.from_bytes(data[cursor:cursor + count], "big")
        cursor += count
    else:
        length = first
    end = cursor + length
    if end > len(data):
        raise ASN1Error("truncated")
    children = None
    if constructed:
        children, inner = [], cursor
        while inner < end:
            child = _read(data, inner, depth + 1)
            if child.end > end:
                raise ASN1Error("an element runs past its parent")
            children.append(child)
            inner = child.end
    return Element(data, tag, position, cursor, end, end, children)
