/// Stored data read over a template: what a newer `State` type decodes when older data lacks its new fields.
extension JSONValue {
    /// This value laid over `base`: where both are objects, every member of `base` that this one lacks is
    /// added (recursively, so nested objects gain their new members too), and this one's members win;
    /// anything else (arrays included: their elements have no template) is this value as it is.
    ///
    /// ```swift
    /// let stored = try JSONParser().parse(Array(#"{"home":3,"team":{"name":"A"}}"#.utf8))
    /// let initial = try JSONParser().parse(Array(#"{"home":0,"away":0,"team":{"name":"","color":"red"}}"#.utf8))
    /// stored.overlaid(on: initial)   // {"home":3,"away":0,"team":{"name":"A","color":"red"}}
    /// ```
    public func overlaid(on base: JSONValue) -> JSONValue {
        guard case .object(let mine) = self, case .object(let template) = base else { return self }
        var merged = JSONObject()
        for (key, value) in template {
            merged[key] = mine[key].map { $0.overlaid(on: value) } ?? value
        }
        for (key, value) in mine where !template.contains(key: key) {
            merged[key] = value
        }
        return .object(merged)
    }
}
