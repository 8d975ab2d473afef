import Glibc

/// A small text file's contents (a key, a few certificates: at most 64 KiB read), or nil with `errno` set.
func readSmallTextFile(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var bytes = [UInt8](repeating: 0, count: 65536)
    let count = fread(&bytes, 1, bytes.count, file)
    guard ferror(file) == 0 else { return nil }
    return String(decoding: bytes[..<count], as: UTF8.self)
}
