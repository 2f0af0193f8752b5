/// What the file journal adds to `/metrics`: how much it writes, and how much of that compaction
/// writes, so an operator sees the write amplification (compaction's bytes over the rest).
final class FileJournalMetrics: Sendable {
    /// Bytes written to segment files: records (sessions' and compaction's) and erasures' overwrites.
    let writtenBytes = Counter()
    /// Bytes of the records compaction wrote: copies of stored sessions, checkpoints of resident
    /// ones, access tokens journaled again.
    let compactionBytes = Counter()
    /// Compaction passes that deleted segments.
    let compactions = Counter()
    /// Bytes of the segments compaction deleted.
    let compactedBytes = Counter()

    /// Appends the journal's families; `disk` is what its segments hold now.
    func render(into text: inout PrometheusText, disk: (segments: Int, bytes: Int)) {
        let families: [(name: String, type: String, help: String, value: Int)] = [
            (
                "reactor_journal_written_bytes_total", "counter",
                "Bytes the file journal wrote to its segments: sessions' records, compaction's copies and checkpoints, "
                    + "and erasures' overwrites.", writtenBytes.value
            ),
            (
                "reactor_journal_compaction_written_bytes_total", "counter",
                "Bytes of records compaction wrote (stored sessions copied forward, checkpoints of sessions in "
                    + "memory, access tokens journaled again); part of reactor_journal_written_bytes_total.",
                compactionBytes.value
            ),
            (
                "reactor_journal_compactions_total", "counter", "Compaction passes that deleted journal segments.",
                compactions.value
            ),
            (
                "reactor_journal_compaction_deleted_bytes_total", "counter",
                "Bytes of the journal segments compaction deleted.", compactedBytes.value
            ),
            ("reactor_journal_segments", "gauge", "Journal segment files, the open one included.", disk.segments),
            ("reactor_journal_bytes", "gauge", "Bytes the journal's segments hold, written or buffered.", disk.bytes),
        ]
        for family in families {
            text.family(family.name, type: family.type, help: family.help)
            text.sample(family.name, value: family.value)
        }
    }
}
