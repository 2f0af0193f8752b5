// swift-format-ignore-file
// (a test holds this file to the documentation line for line, so it keeps the layout the docs show)
// HostingReactors.md's middleware example, inside a function so that its `catalog` is the caller's.
import Reactors
import SessionService

func registerWithPointsLimit(_ catalog: inout ReactorCatalog) {
    struct PointsLimit: ReactorMiddleware {
        typealias R = ScoreboardReactor
        let sessionID: String

        func intercept(action: ScoreboardReactor.Action, state: ScoreboardReactor.State) throws(ActionRejection) {
            if case .score(_, let points) = action, points > 3 {
                throw ActionRejection(code: "too_many_points", message: "a score is 1 to 3 points, not \(points)")
            }
        }

        func didReduce(mutation: ScoreboardReactor.Action, state: ScoreboardReactor.State, version: UInt64) {
            print("\(sessionID) v\(version): \(state.home)-\(state.away)")   // or your analytics
        }
    }

    catalog.register("scoreboard", middlewares: { sessionID in [PointsLimit(sessionID: sessionID)] }) {
        ScoreboardReactor()
    }
    // POST /sessions/game/actions {"type":"score","team":"home","points":5}
    //   → 422 {"error":{"code":"too_many_points","message":"a score is 1 to 3 points, not 5"}}
}
