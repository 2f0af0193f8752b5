// libFuzzer harness for the example reactors' wire types, built by .ci/fuzz-actions with
// swiftc -sanitize=fuzzer,address over Sources/Examples' reactors (JSONCodec and Reactors are linked as
// their own modules). Every input is decoded, as the service decodes it, as each reactor's Action (a
// request body), State (a forced state) and Mutation (a journaled record). Besides crashes, the `expect`
// calls are oracles: whatever decodes must come back equal from what the server stores of it (the
// action log's JSON, the journal's encoding), since a stored value that does not decode again loses a
// session at its next restart. A broken oracle prints what broke and aborts; the input then becomes a
// case in a test table in Tests/ExamplesTests before it is fixed.

import Glibc
import JSONCodec
import Reactors

/// What the service parses bodies with (its defaults) and what it reads its journal with (no limits).
let bodyParser = JSONParser()
let storedParser = JSONParser(maxDepth: .max, maxBytes: .max)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzActions(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    checkAction(CounterReactor.Action.self, input)
    checkAction(FruitReactor.Action.self, input)
    checkAction(TodoReactor.Action.self, input)
    checkAction(SearchReactor.Action.self, input)
    checkStored(CounterReactor.State.self, input)
    checkStored(FruitReactor.State.self, input)
    checkStored(TodoReactor.State.self, input)
    checkStored(SearchReactor.State.self, input)
    checkStored(FruitReactor.Mutation.self, input)
    checkStored(SearchReactor.Mutation.self, input)
    return 0
}

/// A body decodes as an action the same way by every path the service takes (the bare-action cache, the
/// parsed value, with its log JSON), and what it logs and what it encodes decode back to the same action.
func checkAction<A: Codable & Sendable & Equatable>(_ type: A.Type, _ input: [UInt8]) {
    let name = "\(A.self)"
    let direct: A?
    do {
        direct = try decodeAction(A.self, from: input, parser: bodyParser)
    } catch {
        expect(!error.message.isEmpty && !error.code.isEmpty, "\(name): an error without a message")
        direct = nil
    }
    // Twice: the first call may have filled the bare-action cache that the second one reads.
    let again = try? decodeAction(A.self, from: input, parser: bodyParser)
    expect(
        again == direct,
        "\(name): the second decoding differs from the first: "
            + "\(String(describing: direct)) then \(String(describing: again))"
    )
    let parsed = try? bodyParser.parse(input)
    let viaValue = parsed.flatMap { try? decodeAction(A.self, from: $0) }
    expect(
        viaValue == direct,
        "\(name): bytes and parsed value decode differently: "
            + "\(String(describing: direct)) vs \(String(describing: viaValue))"
    )
    let logged = try? decodeActionWithJSON(
        A.self, from: input, parser: bodyParser, encode: { try JSONValueEncoder().encode($0) })
    expect(
        logged?.action == direct,
        "\(name): decodeActionWithJSON differs: \(String(describing: logged?.action)) vs \(String(describing: direct))")
    guard let action = direct, let logged else { return }

    // The action log's JSON is what admin shows and a replay reads.
    let replayed = try? decodeAction(A.self, from: logged.json, parser: storedParser)
    expect(
        replayed == action,
        "\(name): the logged JSON \(text(logged.json)) decodes as \(String(describing: replayed)), not \(action)")
    let encoded: [UInt8]
    do {
        encoded = try encodeAction(action)
    } catch {
        fail("\(name): \(action) does not encode: \(error)")
    }
    expect(encoded == logged.json, "\(name): the logged JSON \(text(logged.json)) is not the encoding \(text(encoded))")
    let decoded = try? decodeAction(A.self, from: encoded, parser: storedParser)
    expect(decoded == action, "\(name): \(text(encoded)) decodes as \(String(describing: decoded)), not \(action)")
}

/// Whatever decodes as a state (a forced state) or a mutation encodes to JSON that decodes, with the
/// journal's reader, to an equal value; and encoding that again gives the very same bytes.
func checkStored<T: Codable & Equatable>(_ type: T.Type, _ input: [UInt8]) {
    var decoder = JSONValueDecoder()
    decoder.parser = bodyParser
    guard let value = try? decoder.decode(T.self, from: input) else { return }
    let encoded: [UInt8]
    do {
        encoded = try JSONValueEncoder().encode(value)
    } catch {
        fail("\(T.self): \(value) does not encode: \(error)")
    }
    var stored = JSONValueDecoder()
    stored.parser = storedParser
    let reloaded: T
    do {
        reloaded = try stored.decode(T.self, from: encoded)
    } catch {
        fail("\(T.self): the stored \(text(encoded)) does not decode: \(error)")
    }
    expect(reloaded == value, "\(T.self): \(text(encoded)) reloads as \(reloaded), not \(value)")
    expect(
        (try? JSONValueEncoder().encode(reloaded)) == encoded,
        "\(T.self): encoding is not a fixed point for \(text(encoded))")
}

/// At most 200 characters of `bytes`, for messages.
func text(_ bytes: [UInt8]) -> String {
    String(decoding: bytes.prefix(200), as: UTF8.self)
}

/// An oracle: prints `message` and aborts when `condition` is false. (`precondition` traps without its
/// message in an optimized build, which would leave only the input to guess from.)
func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// Prints `message` and aborts: the fuzzer saves the input.
func fail(_ message: String) -> Never {
    fputs("ActionsFuzz: \(message)\n", stderr)
    abort()
}
