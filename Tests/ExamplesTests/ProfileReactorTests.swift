import Examples
import JSONCodec
import Reactors
import ReactorsTesting
import Testing

@Suite struct ProfileReactorTests {
    /// A profile of `userID` asking `users`, in a tester on `clock`, its context attached to the tester's runtime.
    static func tester(
        userID: Int, users: FakeUserService, clock: TestClock
    ) -> ReactorTester<ProfileReactor> {
        let context = ReactorContext<ProfileReactor, ProfileReactor.Params>(
            sessionID: "profile-\(userID)", params: .init(userID: userID), clock: clock, logger: .discarding)
        let tester = ReactorTester(ProfileReactor(context: context, users: users), clock: clock)
        context.attach(to: tester.runtime)
        return tester
    }

    @Test func aNewProfileShowsItsUserNotFollowedNotLoading() async {
        let clock = TestClock()
        let tester = Self.tester(userID: 7, users: FakeUserService(clock: clock), clock: clock)
        #expect(tester.state == ProfileReactor.State(userID: 7, isFollowing: false, isLoading: false))
        await tester.finish()
    }

    /// ReactorKit's flow: the spinner, the user service's answer after its latency, the spinner gone.
    @Test func followAsksTheUserServiceThenShowsItsAnswer() async {
        let clock = TestClock()
        let users = FakeUserService(clock: clock, latency: .milliseconds(300))
        let tester = Self.tester(userID: 7, users: users, clock: clock)
        await tester.send(.follow) { $0.isLoading = true }
        await tester.advance(by: .milliseconds(299))
        tester.expectNoUnassertedStates()
        await tester.receive(.setFollowing(true), timeout: .milliseconds(1), at: .milliseconds(300)) {
            $0.isFollowing = true
        }
        await tester.receive(.setLoading(false), at: .milliseconds(300)) { $0.isLoading = false }
        await tester.send(.unfollow) { $0.isLoading = true }
        await tester.receive(.setFollowing(false), timeout: .milliseconds(300)) { $0.isFollowing = false }
        await tester.receive(.setLoading(false)) { $0.isLoading = false }
        await tester.finish()
    }

    /// Following is the user service's, per user: a second profile of the same user sees it after a refresh, a
    /// profile of another user does not.
    @Test func twoProfilesOfOneUserAgreeAfterARefresh() async {
        let clock = TestClock()
        let users = FakeUserService(clock: clock, latency: .milliseconds(300))
        let first = Self.tester(userID: 7, users: users, clock: clock)
        await first.send(.follow) { $0.isLoading = true }
        await first.receive(.setFollowing(true), timeout: .milliseconds(300)) { $0.isFollowing = true }
        await first.receive(.setLoading(false)) { $0.isLoading = false }
        await first.finish()

        let second = Self.tester(userID: 7, users: users, clock: clock)
        await second.send(.refreshFollowingStatus) { $0.isLoading = true }
        await second.receive(.setFollowing(true), timeout: .milliseconds(300)) { $0.isFollowing = true }
        await second.receive(.setLoading(false)) { $0.isLoading = false }
        await second.finish()

        let other = Self.tester(userID: 8, users: users, clock: clock)
        await other.send(.refreshFollowingStatus) { $0.isLoading = true }
        await other.receive(.setFollowing(false), timeout: .milliseconds(300))
        await other.receive(.setLoading(false)) { $0.isLoading = false }
        await other.finish()
    }

    /// A request made while one is in flight replaces it: only the later answer shows.
    @Test func aLaterRequestReplacesTheOneInFlight() async {
        let clock = TestClock()
        let tester = Self.tester(userID: 3, users: FakeUserService(clock: clock), clock: clock)
        tester.schedule(.follow, at: .zero)
        tester.schedule(.unfollow, at: .milliseconds(100))
        await tester.run()
        await tester.receive(.setLoading(true), at: .zero) { $0.isLoading = true }
        await tester.receive(.setLoading(true), at: .milliseconds(100))
        await tester.receive(.setFollowing(false), at: .milliseconds(400))
        await tester.receive(.setLoading(false), at: .milliseconds(400)) { $0.isLoading = false }
        await tester.finish()
    }

    @Test(
        arguments: [
            (#"{"userID":7}"#, nil),
            (#"{"userID":7,"extra":true}"#, nil),
            (#"{}"#, #"missing field "userID""#),
            (#"{"userID":"7"}"#, #""userID""#),
            (#"{"userID":0}"#, #""userID": a user id is at least 1, got 0"#),
        ] as [(String, String?)])
    func paramsDecodeOrNameTheField(json: String, problem: String?) {
        do {
            let params = try JSONValueDecoder().decode(ProfileReactor.Params.self, from: Array(json.utf8))
            #expect(problem == nil)
            #expect(params.userID == 7)
        } catch {
            let message = (error as? JSONDecodingError)?.message ?? "\(error)"
            #expect(problem.map { message.contains($0) } == true, "\(message)")
        }
    }

    @Test func theSchemaDescribesParamsActionsAndState() {
        #expect(ProfileReactor.schema.actions.map(\.type) == ProfileReactor.Action.allCases.map(\.rawValue))
        #expect(
            ProfileReactor.exampleActions == [
                #"{"type":"refreshFollowingStatus"}"#, #"{"type":"follow"}"#, #"{"type":"unfollow"}"#,
            ])
        let params = ProfileReactor.schema.params?.json.serializedString() ?? ""
        #expect(params.contains(#""userID""#) && params.contains(#""minimum":1"#))
    }
}
