import Testing
import XCTest

/// Where a tester method was called from, so a failure points at the test's own line under either runner.
///
/// Every public assertion takes `fileID`, `filePath`, `line` and `column` defaulted at the call site and passes
/// them on; XCTest needs the `StaticString` path, Swift Testing a `SourceLocation`.
public struct CallSite: Sendable {
    let fileID: StaticString
    let filePath: StaticString
    let line: UInt
    let column: UInt

    /// The call site of the caller: pass `#fileID`, `#filePath`, `#line`, `#column` through.
    public init(fileID: StaticString, filePath: StaticString, line: UInt, column: UInt) {
        self.fileID = fileID
        self.filePath = filePath
        self.line = line
        self.column = column
    }

    /// The same place as Swift Testing names it.
    var sourceLocation: SourceLocation {
        SourceLocation(fileID: "\(fileID)", filePath: "\(filePath)", line: Int(line), column: Int(column))
    }
}

/// Records a test failure through the test library that runs the current test: Swift Testing's
/// `Issue.record` inside a `@Test` (so `withKnownIssue` sees it), XCTest's `XCTFail` otherwise.
///
/// Call it from the test's own task or a child task: Swift Testing finds its test through a task-local, and a
/// failure recorded from a detached task would be lost by both libraries (each drops a failure it cannot place).
func recordFailure(_ message: String, at site: CallSite) {
    if Test.current != nil {
        Issue.record(Comment(rawValue: message), sourceLocation: site.sourceLocation)
    } else {
        XCTFail(message, file: site.filePath, line: site.line)
    }
}
