import RoomWire

// The writers' shared pieces, for the `@inlinable` encoders of this module
// (`@inlinable internal`: invisible to other modules, so no name of
// theirs can clash with them).
extension JSONWriter {
    /// `"key": value`, or `"key": null`.
    @inlinable
    mutating func wireField(_ key: String, orNull value: String?) {
        self.key(key)
        if let value { string(value) } else { null() }
    }

    /// `"key": value`, or `"key": null`.
    @inlinable
    mutating func wireField(_ key: String, orNull value: Int64?) {
        self.key(key)
        if let value { int(value) } else { null() }
    }

    /// `"key": [values]`, or `"key": null`.
    @inlinable
    mutating func wireField(_ key: String, orNull values: [String]?) {
        self.key(key)
        if let values { strings(values) } else { null() }
    }

    /// `[1,2,3]`.
    @inlinable
    mutating func wireInts(_ values: [Int]) {
        beginArray()
        for value in values { int(value) }
        endArray()
    }
}
