/// The verifyReceipt endpoint a receipt belongs to. The raw values are Apple's
/// own spelling, which is also what the `environment` columns store.
public enum AppleEnvironment: String, Sendable, CaseIterable {
    case production = "Production"
    case sandbox = "Sandbox"
}
