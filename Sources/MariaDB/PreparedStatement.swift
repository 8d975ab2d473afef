import CMariaDB

/// A server-side prepared statement: parameters are bound, never spliced into SQL.
/// Results are fetched as text, in buffers sized by the server's `max_length`.
final class PreparedStatement {
    private let handle: UnsafeMutablePointer<MYSQL_STMT>
    private let connection: UnsafeMutablePointer<MYSQL>
    private let parameterCount: Int

    init(connection: UnsafeMutablePointer<MYSQL>, sql: String) throws(MariaDBError) {
        guard let statement = mysql_stmt_init(connection) else {
            throw MariaDBError.from(connection, "mysql_stmt_init")
        }
        let bytes = Array(sql.utf8)
        if mysql_stmt_prepare(statement, bytes, UInt(bytes.count)) != 0 {
            let error = MariaDBError.from(statement: statement, "mysql_stmt_prepare")
            mysql_stmt_close(statement)
            throw error
        }
        _ = CMariaDB_stmt_update_max_length(statement)
        handle = statement
        self.connection = connection
        parameterCount = Int(mysql_stmt_param_count(statement))
    }

    func close() {
        mysql_stmt_close(handle)
    }

    func execute(_ parameters: [SQLValue]) throws(MariaDBError) -> SQLResult {
        precondition(parameters.count == parameterCount, "statement takes \(parameterCount) parameters")
        try ParameterBinding.with(parameters) { binds throws(MariaDBError) in
            if parameterCount > 0, mysql_stmt_bind_param(handle, binds) != 0 {
                throw MariaDBError.from(statement: handle, "mysql_stmt_bind_param")
            }
            if mysql_stmt_execute(handle) != 0 {
                throw MariaDBError.from(statement: handle, "mysql_stmt_execute")
            }
        }
        // Read after executing: an INSERT ... RETURNING has no columns when
        // prepared, and its result set must be read before the next statement.
        let columnCount = Int(mysql_stmt_field_count(handle))
        if columnCount > 0 {
            return SQLResult(rows: try fetchRows(columnCount), affectedRows: 0, matchedRows: nil, insertID: 0)
        }
        return SQLResult(
            rows: [], affectedRows: mysql_stmt_affected_rows(handle),
            matchedRows: mysql_info(connection).flatMap { SQLResult.matchedRows(inInfo: String(cString: $0)) },
            insertID: mysql_stmt_insert_id(handle))
    }

    private func fetchRows(_ columnCount: Int) throws(MariaDBError) -> [[String?]] {
        if mysql_stmt_store_result(handle) != 0 {
            throw MariaDBError.from(statement: handle, "mysql_stmt_store_result")
        }
        defer { mysql_stmt_free_result(handle) }
        guard let metadata = mysql_stmt_result_metadata(handle) else {
            throw MariaDBError.from(statement: handle, "mysql_stmt_result_metadata")
        }
        defer { mysql_free_result(metadata) }
        let fields = mysql_fetch_fields(metadata)!
        let results = ResultBuffers(capacities: (0..<columnCount).map { max(Int(fields[$0].max_length), 64) + 1 })
        if mysql_stmt_bind_result(handle, results.binds) != 0 {
            throw MariaDBError.from(statement: handle, "mysql_stmt_bind_result")
        }
        var rows: [[String?]] = []
        while true {
            let status = mysql_stmt_fetch(handle)
            if status == MYSQL_NO_DATA { break }
            if status == 1 { throw MariaDBError.from(statement: handle, "mysql_stmt_fetch") }
            rows.append((0..<columnCount).map { results.value(at: $0) })
        }
        return rows
    }
}

/// Input binds for one execution; the values live until `body` returns.
///
/// Every value is copied into one buffer of the execution's own: a batch
/// insert binds a hundred values and more, and one allocation each (then
/// one free each) was most of what binding cost (`perf`, bench case e1).
private enum ParameterBinding {
    static func with(
        _ parameters: [SQLValue], _ body: (UnsafeMutablePointer<MYSQL_BIND>) throws(MariaDBError) -> Void
    ) throws(MariaDBError) {
        let binds = UnsafeMutablePointer<MYSQL_BIND>.allocate(capacity: max(parameters.count, 1))
        binds.initialize(repeating: MYSQL_BIND(), count: max(parameters.count, 1))
        // Integers first (8-byte aligned), then the texts' bytes one after another.
        var integerCount = 0
        var textByteCount = 0
        for parameter in parameters {
            switch parameter {
            case .null: break
            case .integer: integerCount += 1
            case .text(let text), .asciiBytes(let text): textByteCount += text.utf8.count
            }
        }
        let arena = UnsafeMutableRawPointer.allocate(byteCount: max(integerCount * 8 + textByteCount, 1), alignment: 8)
        defer {
            arena.deallocate()
            binds.deallocate()
        }
        var integerEnd = 0
        var textEnd = integerCount * 8
        for (index, parameter) in parameters.enumerated() {
            switch parameter {
            case .null:
                binds[index].buffer_type = MYSQL_TYPE_NULL
            case .text(let text):
                bind(text, as: MYSQL_TYPE_STRING, to: &binds[index], in: arena, at: &textEnd)
            case .asciiBytes(let text):
                bind(text, as: MYSQL_TYPE_BLOB, to: &binds[index], in: arena, at: &textEnd)
            case .integer(let value):
                (arena + integerEnd).storeBytes(of: value, as: Int64.self)
                binds[index].buffer_type = MYSQL_TYPE_LONGLONG
                binds[index].buffer = arena + integerEnd
                integerEnd += 8
            }
        }
        try body(binds)
    }

    /// Copies `text`'s UTF-8 into `arena` at `offset` for `bind`, and moves `offset` past it.
    private static func bind(
        _ text: String, as type: enum_field_types, to bind: inout MYSQL_BIND,
        in arena: UnsafeMutableRawPointer, at offset: inout Int
    ) {
        var text = text
        let count = text.utf8.count
        if count > 0 {
            text.withUTF8 { (arena + offset).copyMemory(from: $0.baseAddress!, byteCount: count) }
        }
        bind.buffer_type = type
        bind.buffer = arena + offset
        bind.buffer_length = UInt(count)
        offset += count
    }
}

/// Output binds: every column fetched as a string into a buffer of its own.
private final class ResultBuffers {
    let binds: UnsafeMutablePointer<MYSQL_BIND>
    private let count: Int
    private let lengths: UnsafeMutablePointer<UInt>
    private let nulls: UnsafeMutablePointer<my_bool>
    private let buffers: [UnsafeMutableRawPointer]

    init(capacities: [Int]) {
        count = capacities.count
        binds = .allocate(capacity: count)
        binds.initialize(repeating: MYSQL_BIND(), count: count)
        lengths = .allocate(capacity: count)
        lengths.initialize(repeating: 0, count: count)
        nulls = .allocate(capacity: count)
        nulls.initialize(repeating: 0, count: count)
        buffers = capacities.map { UnsafeMutableRawPointer.allocate(byteCount: $0, alignment: 1) }
        for index in 0..<count {
            binds[index].buffer_type = MYSQL_TYPE_STRING
            binds[index].buffer = buffers[index]
            binds[index].buffer_length = UInt(capacities[index])
            binds[index].length = lengths + index
            binds[index].is_null = nulls + index
        }
    }

    deinit {
        buffers.forEach { $0.deallocate() }
        binds.deallocate()
        lengths.deallocate()
        nulls.deallocate()
    }

    func value(at index: Int) -> String? {
        if nulls[index] != 0 { return nil }
        let length = min(Int(lengths[index]), Int(binds[index].buffer_length))
        return String(decoding: UnsafeRawBufferPointer(start: buffers[index], count: length), as: UTF8.self)
    }
}
