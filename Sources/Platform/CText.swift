// SPDX-License-Identifier: Apache-2.0

extension String {
    /// The text of a C string held in a fixed-size char array (a struct field, a tuple in Swift),
    /// up to its first NUL: V4L2's driver and card names, the libcamera plugin's ids.
    public init<Field>(cField field: Field) {
        self = withUnsafeBytes(of: field) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// The text a C function wrote into `buffer`, up to its first NUL (a message, a host name).
    public init(cBuffer buffer: [CChar]) {
        self = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Whether `word` occurs in `text`, byte for byte. (String's own `contains(_:)` for a string
/// comes from _StringProcessing, which would link the Regex engine, 0.8 MB of code, for this:
/// `make test-deploy` checks the binary holds none of it.)
public func mentions(_ text: String, _ word: String) -> Bool {
    let t = Array(text.utf8), w = Array(word.utf8)
    guard !w.isEmpty, w.count <= t.count else { return w.isEmpty }
    return (0...(t.count - w.count)).contains { t[$0 ..< $0 + w.count].elementsEqual(w) }
}
