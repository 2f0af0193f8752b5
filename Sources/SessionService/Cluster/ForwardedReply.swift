import Dispatch
import HTTPServer

/// The answer channel of a request another instance forwarded: the answer goes back to that instance once the
/// records it shows are durable here (as the output barrier holds a connection's answer), or a 503 instead when
/// they can never be stored or storing fails meanwhile.
final class ForwardedReply: ExchangeReplyChannel {
    private let storage: (any StorageBackend)?
    private let reply: @Sendable (ForwardedResponse) -> Void

    init(storage: (any StorageBackend)?, reply: @escaping @Sendable (ForwardedResponse) -> Void) {
        self.storage = storage
        self.reply = reply
    }

    func respond(
        status: Int, headers: HTTPHeaders, body: [UInt8], dependingOn position: UInt64?, refusedUnlessStored: Bool
    ) {
        let response = ForwardedResponse(
            status: status, headers: headers.map { ForwardedHeader(name: $0.name, value: $0.value) }, body: body)
        guard let storage, position != 0 else { return reply(response) }
        let exact = position != nil
        let position = position ?? storage.appendedPosition
        let reply = self.reply
        storage.whenDurable(position) {
            // Woken on the storage's thread, possibly with its locks held: answered from another.
            DispatchQueue.global().async {
                let lost = exact ? storage.lossReason(position) : nil
                let unstored =
                    storage.isDurable(position) ? nil : storage.unavailableReason ?? "its records were not stored"
                guard let reason = lost ?? unstored else { return reply(response) }
                let error =
                    lost.map {
                        APIError(
                            .storageUnavailable,
                            "this answer showed records that can never be stored (\($0)); nothing it acknowledged took "
                                + "effect, ask again")
                    } ?? APIError(SessionError.storageUnavailable(reason))
                let fields =
                    error.headers.map { ForwardedHeader(name: $0.0, value: $0.1) }
                    + [ForwardedHeader(name: "Content-Type", value: Exchange.jsonContentType)]
                reply(ForwardedResponse(status: error.status, headers: fields, body: error.body + [UInt8(ascii: "\n")]))
            }
        }
    }
}
