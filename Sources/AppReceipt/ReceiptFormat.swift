import IAPCore

extension AppleReceipt.Format {
    /// Which of Apple's two formats a decoded receipt is, by its first byte:
    /// an iOS 6 transaction receipt is an old-style plist (`{`, perhaps after
    /// spaces); anything else is taken for an app receipt, whose check then
    /// says what is wrong with it. Transaction receipts can only be checked by
    /// verifyReceipt: `local` and `server-api` send them there.
    public static func of(_ receipt: [UInt8]) -> AppleReceipt.Format {
        let first = receipt.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
        return first == UInt8(ascii: "{") ? .transactionReceipt : .appReceipt
    }
}
