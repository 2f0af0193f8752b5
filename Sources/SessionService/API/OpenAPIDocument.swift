import Foundation

/// `GET /openapi.json`: the OpenAPI 3.1 description of every route in ``Route/table``. A test checks
/// that the document and the router list exactly the same routes.
enum OpenAPIDocument {
    /// The document, with the hosted reactor names as the `reactor` enum.
    static func json(reactors: [String]) -> [UInt8] {
        let names = reactors.map(JSONWriter.quoted).joined(separator: ",")
        return Array(template.replacingOccurrences(of: "\"__REACTORS__\"", with: names).utf8)
    }

    static let template = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "reactor-server",
    "version": "1.0.0",
    "description": "A state service hosting one ReactorKit-style reactor per session. Clients POST actions; subscribers watch states over Server-Sent Events; admin endpoints expose stub mode and action logs. Every error is {\"error\": {\"code\", \"message\"}}. Besides the statuses listed per operation, any request may get: 400 bad_request (malformed request, missing, repeated, invalid or disagreeing Host), 405 method_not_allowed with Allow (a method the path does not serve), 408 request_timeout, 413 body_too_large, 414 uri_too_long, 431 headers_too_large, 501 not_implemented (a method no route serves, on an unknown path; CONNECT), 503 too_many_connections, response_timeout or shutting_down (at the shutdown deadline); each closes the connection. HEAD is served wherever GET is, with GET's headers and no body (on an event stream: the head alone, no subscription)."
  },
  "components": {
    "securitySchemes": {
      "admin": {"type": "http", "scheme": "bearer", "description": "The admin token: REACTOR_ADMIN_TOKEN, admin.token or admin.tokenFile; generated and printed to standard error at start when none is set."},
      "session": {"type": "http", "scheme": "bearer", "description": "With auth.sessions=token: the session's capability token from POST /sessions; with auth.sessions=jwt: an HS256 JWT naming the session and the right. Streams also take it as ?access_token=. Not needed with auth.sessions=open."}
    },
    "parameters": {
      "id": {"name": "id", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}}
    },
    "schemas": {
      "Error": {
        "type": "object", "required": ["error"],
        "properties": {"error": {"type": "object", "required": ["code", "message"], "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}}
      },
      "Session": {
        "type": "object", "required": ["id", "reactor", "version", "state"],
        "properties": {"id": {"type": "string"}, "reactor": {"type": "string"}, "version": {"type": "integer", "minimum": 0}, "state": {}}
      },
      "Action": {
        "type": "object", "required": ["type"], "additionalProperties": true,
        "properties": {"type": {"type": "string", "description": "The action case; other members are its payload."}}
      }
    },
    "responses": {
      "Error": {"description": "An error; see the code.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
      "Unauthorized": {"description": "Missing or wrong admin token (unauthorized).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
      "UnknownSession": {"description": "No such session (unknown_session).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
      "SessionUnavailable": {"description": "session_unavailable: the session's stored history is damaged or no longer decodes (the message says why and where); DELETE it to start over.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
      "StorageUnavailable": {"description": "storage_unavailable: the journal cannot be written, or this stored session cannot be read from it right now (descriptors exhausted, an I/O error; the message says why). Nothing is lost or quarantined; retry later.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
      "ServerAnswer": {"description": "An answer the HTTP server gives by itself, on any route: 408 request_timeout, 503 too_many_connections, response_timeout or shutting_down; the connection closes after it.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    }
  },
  "paths": {
    "/": {
      "get": {"summary": "A page to try the service in a browser; ?session=ID opens that session.", "responses": {"200": {"description": "HTML", "content": {"text/html": {}}}}}
    },
    "/favicon.ico": {
      "get": {"summary": "The pages' icon (SVG).", "responses": {"200": {"description": "An SVG image.", "content": {"image/svg+xml": {}}}}}
    },
    "/healthz": {
      "get": {"summary": "Liveness: 200 while the server accepts work.", "responses": {
        "200": {"description": "{\"status\": \"ok\"}", "content": {"application/json": {"schema": {"type": "object", "properties": {"status": {"type": "string"}}}}}},
        "503": {"description": "Shutting down, or the journal cannot be written (error code storage_unavailable)."}}}
    },
    "/metrics": {
      "get": {"summary": "Prometheus metrics.", "responses": {"200": {"description": "Text exposition format 0.0.4.", "content": {"text/plain": {}}}}}
    },
    "/openapi.json": {
      "get": {"summary": "This document.", "responses": {"200": {"description": "OpenAPI 3.1", "content": {"application/json": {}}}}}
    },
    "/reactors": {
      "get": {"summary": "Every hosted reactor type.", "responses": {"200": {"description": "Reactors with initial state and example actions.", "content": {"application/json": {"schema": {
        "type": "object", "properties": {"reactors": {"type": "array", "items": {"type": "object", "required": ["name", "initialState"], "properties": {
          "name": {"type": "string"}, "description": {"type": "string"}, "initialState": {}, "actions": {"type": "array", "items": {"$ref": "#/components/schemas/Action"}}}}}}}}}}}}
    },
    "/sessions": {
      "post": {"summary": "Create a session.", "requestBody": {"required": true, "content": {"application/json": {"schema": {
          "type": "object", "required": ["reactor"], "properties": {"reactor": {"type": "string", "enum": ["__REACTORS__"]}, "id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}}}}}},
        "responses": {
          "201": {"description": "Created; Location: /sessions/{id}.", "headers": {"Location": {"schema": {"type": "string"}}}, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Session"}}}},
          "400": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"}, "409": {"$ref": "#/components/responses/Error"},
          "415": {"$ref": "#/components/responses/Error"}, "429": {"$ref": "#/components/responses/Error"}, "503": {"$ref": "#/components/responses/Error"}}}
    },
    "/sessions/{id}": {
      "parameters": [{"$ref": "#/components/parameters/id"}],
      "get": {"summary": "A session's version and state.", "responses": {"200": {"description": "The session.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Session"}}}}, "404": {"$ref": "#/components/responses/UnknownSession"}, "409": {"$ref": "#/components/responses/SessionUnavailable"}, "503": {"$ref": "#/components/responses/StorageUnavailable"}}},
      "delete": {"summary": "Delete a session: effects cancelled, subscribers get event: end.", "responses": {"204": {"description": "Deleted."}, "404": {"$ref": "#/components/responses/UnknownSession"}, "503": {"$ref": "#/components/responses/StorageUnavailable"}}}
    },
    "/sessions/{id}/actions": {
      "parameters": [{"$ref": "#/components/parameters/id"}],
      "post": {"summary": "Send an action.",
        "parameters": [{"name": "wait", "in": "query", "schema": {"type": "boolean"}, "description": "Answer once every mutation of the action is reduced (504 timeout after sessions.waitTimeoutSeconds)."}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Action"}}}},
        "responses": {
          "202": {"description": "Accepted.", "content": {"application/json": {"schema": {"type": "object", "required": ["seq"], "properties": {"seq": {"type": "integer", "minimum": 1}}}}}},
          "200": {"description": "With wait=true: reduced.", "content": {"application/json": {"schema": {"type": "object", "required": ["seq", "version", "state"], "properties": {"seq": {"type": "integer"}, "version": {"type": "integer"}, "state": {}}}}}},
          "400": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/UnknownSession"}, "409": {"$ref": "#/components/responses/SessionUnavailable"},
          "413": {"description": "body_too_large: the body exceeds http.maxBodyBytes (the JSON reader takes the same limit, so a body under it is never refused as too large); action_too_large: the action, encoded again as it decoded, is larger than one journal record holds; nothing was accepted.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "415": {"$ref": "#/components/responses/Error"},
          "422": {"description": "unknown_action (no or unknown type); invalid_action (the payload does not decode, e.g. an integer outside its type's range or written inexactly, the field named); with wait=true also state_too_large (the state the action produced would be larger than sessions.maxStateBytes of JSON; it was not applied, the session is unchanged) or state_not_encodable (that state has no JSON form). Without wait the action is accepted (202) and such a refusal shows as error in its action-log entry.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "503": {"$ref": "#/components/responses/StorageUnavailable"},
          "504": {"$ref": "#/components/responses/Error"}}}
    },
    "/sessions/{id}/events": {
      "parameters": [{"$ref": "#/components/parameters/id"}],
      "get": {"summary": "Server-Sent Events: event: state (id = version), event: pulse, event: end, event: error.",
        "parameters": [
          {"name": "select", "in": "query", "schema": {"type": "string"}, "description": "A JSON pointer (RFC 6901): send only when the selected value changes; data is the selected value. Pulses are sent only for the selected part: pulse p when the pointer is /p or inside it (the whole state, no select, gets every pulse)."},
          {"name": "Last-Event-ID", "in": "header", "schema": {"type": "string"}, "description": "Resume: the current state is sent only if newer than this version."}],
        "responses": {"200": {"description": "An event stream.", "content": {"text/event-stream": {}}}, "400": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/UnknownSession"}, "409": {"$ref": "#/components/responses/SessionUnavailable"}, "503": {"$ref": "#/components/responses/StorageUnavailable"}}}
    },
    "/events": {
      "get": {"summary": "Server-Sent Events of several sessions over one stream: every data names its session, every id: is one cursor for the whole stream; event: end ends one session's part (deleted, unknown_session, unauthorized).",
        "parameters": [
          {"name": "sessions", "in": "query", "required": true, "schema": {"type": "string"}, "description": "Comma-separated session ids, at most sse.maxSessionsPerStream, none twice."},
          {"name": "select", "in": "query", "schema": {"type": "string"}, "description": "A JSON pointer applied to every session, as on /sessions/{id}/events."},
          {"name": "access_token", "in": "query", "schema": {"type": "string"}, "description": "auth.sessions=token: one token per session, comma-separated in the order of sessions; jwt: the JWT."},
          {"name": "Last-Event-ID", "in": "header", "schema": {"type": "string"}, "description": "A cursor this stream sent: every session resumes after it."}],
        "responses": {"200": {"description": "An event stream.", "content": {"text/event-stream": {}}}, "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"}, "503": {"$ref": "#/components/responses/Error"}}}
    },
    "/admin/console": {
      "get": {"summary": "The admin console page: sessions, live state, action log, stub mode, time travel, fork. The page is public; it asks for the admin token and sends it only in Authorization headers.",
        "responses": {"200": {"description": "HTML", "content": {"text/html": {}}}}}
    },
    "/admin/sessions": {
      "get": {"summary": "Every session with version, subscribers and stub flag.", "security": [{"admin": []}],
        "responses": {"200": {"description": "Sessions.", "content": {"application/json": {"schema": {"type": "object", "properties": {"sessions": {"type": "array", "items": {"type": "object",
          "required": ["id", "reactor", "version", "subscribers", "stub"], "properties": {"id": {"type": "string"}, "reactor": {"type": "string"}, "version": {"type": "integer"}, "subscribers": {"type": "integer"}, "stub": {"type": "boolean"},
          "idleSeconds": {"type": "integer"}, "resident": {"type": "boolean"}, "unavailable": {"type": "string", "description": "Why the session cannot be served (quarantined); its requests answer 409 session_unavailable."}, "subscriberDetails": {"type": "array", "items": {"type": "object", "properties": {"queuedBytes": {"type": "integer"}, "lastEventId": {"type": ["integer", "null"]}, "drops": {"type": "integer"}, "select": {"type": ["string", "null"]}}}}}}}}}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}}}
    },
    "/admin/sessions/{id}/actions": {
      "parameters": [{"$ref": "#/components/parameters/id"}],
      "get": {"summary": "The session's action log, oldest first.", "security": [{"admin": []}],
        "parameters": [{"name": "since", "in": "query", "schema": {"type": "integer", "minimum": 0}}, {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100000, "default": 1000}}],
        "responses": {"200": {"description": "Entries with seq > since; next when more remain.", "content": {"application/json": {"schema": {"type": "object", "properties": {
          "actions": {"type": "array", "items": {"type": "object", "properties": {"seq": {"type": "integer"}, "at": {"type": "string", "format": "date-time"}, "action": {"allOf": [{"$ref": "#/components/schemas/Action"}], "description": "The action as it decoded, encoded again (members the reactor does not read are not kept)."}, "stubbed": {"type": "boolean", "description": "Whether stub mode took the action (decided as it was accepted, in seq order): recorded, neither mutate nor reduce ran."}, "interrupted": {"type": "boolean", "description": "Present and true when the server stopped (crashed) before the action's effects finished; it is never re-run."},
            "error": {"type": "object", "required": ["code", "message"], "properties": {"code": {"type": "string"}, "message": {"type": "string"}}, "description": "Present when a state the action produced was refused and dropped (state_too_large, state_not_encodable); kept for the latest 1,000 refused actions while the session is in memory."}}}},
          "next": {"type": "integer"}}}}}},
          "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Unauthorized"}, "404": {"$ref": "#/components/responses/UnknownSession"}, "409": {"$ref": "#/components/responses/SessionUnavailable"}, "503": {"$ref": "#/components/responses/StorageUnavailable"}}}
    },
    "/admin/sessions/{id}/stub": {
      "parameters": [{"$ref": "#/components/parameters/id"}],
      "put": {"summary": "Turn stub mode on or off (the current state is kept).", "security": [{"admin": []}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["enabled"], "properties": {"enabled": {"type": "boolean"}}}}}},
        "responses": {"200": {"description": "The stub flag.", "content": {"application/json": {"schema": {"type": "object", "properties": {"stub": {"type": "boolean"}}}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}, "404": {"$ref": "#/components/responses/UnknownSession"}, "409": {"$ref": "#/components/responses/SessionUnavailable"}, "422": {"$ref": "#/components/responses/Error"}, "503": {"$ref": "#/components/responses/StorageUnavailable"}}}
    },
    "/admin/sessions/{id}/state": {
      "parameters": [{"$ref": "#/components/parameters/id"}],
      "put": {"summary": "Force a state (stub mode only); emitted as a new version, each of its pulses counting as assigned.", "security": [{"admin": []}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {}}}},
        "responses": {"200": {"description": "The new version.", "content": {"application/json": {"schema": {"type": "object", "properties": {"version": {"type": "integer"}, "state": {}}}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}, "404": {"$ref": "#/components/responses/UnknownSession"}, "409": {"$ref": "#/components/responses/Error"},
          "422": {"description": "invalid_state (the body does not decode as the reactor's state) or state_too_large (its JSON is larger than sessions.maxStateBytes; nothing changed).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}, "503": {"$ref": "#/components/responses/StorageUnavailable"}}}
    },
    "/admin/sessions/{id}/versions/{version}": {
      "parameters": [{"$ref": "#/components/parameters/id"}, {"name": "version", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 0}}],
      "get": {"summary": "Time travel: the state at a past version, replayed from the journal (nearest snapshot at or below it, then its mutations).", "security": [{"admin": []}],
        "responses": {"200": {"description": "The state at that version.", "content": {"application/json": {"schema": {"type": "object", "properties": {"id": {"type": "string"}, "version": {"type": "integer"}, "state": {}}}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}, "404": {"$ref": "#/components/responses/Error"}, "409": {"$ref": "#/components/responses/Error"}, "503": {"$ref": "#/components/responses/StorageUnavailable"},
          "410": {"description": "Older than the retained history (version_gone): compaction keeps the latest snapshot and what follows it.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}}}
    },
    "/admin/sessions/{id}/fork": {
      "parameters": [{"$ref": "#/components/parameters/id"}],
      "post": {"summary": "Fork a new session from a past version: its state is the source's state at that version and its version starts there.", "security": [{"admin": []}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["version"], "properties": {"version": {"type": "integer", "minimum": 0}, "id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}}}}}},
        "responses": {"201": {"description": "The new session.", "headers": {"Location": {"schema": {"type": "string"}}}, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Session"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}, "404": {"$ref": "#/components/responses/Error"}, "409": {"$ref": "#/components/responses/Error"}, "410": {"$ref": "#/components/responses/Error"},
          "422": {"description": "invalid_request (no version) or state_too_large (the state at that version is larger than sessions.maxStateBytes of JSON, e.g. after the limit was lowered).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}, "503": {"$ref": "#/components/responses/StorageUnavailable"}}}
    },
    "/admin/sessions/{id}/token": {
      "parameters": [{"$ref": "#/components/parameters/id"}],
      "post": {"summary": "Replace a session's capability token (auth.sessions=token); the old token stops working at once.", "security": [{"admin": []}],
        "responses": {"200": {"description": "The new token, shown only here.", "content": {"application/json": {"schema": {"type": "object", "required": ["token"], "properties": {"token": {"type": "string", "pattern": "^[A-Za-z0-9_-]{43}$"}}}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}, "404": {"$ref": "#/components/responses/UnknownSession"}, "409": {"description": "Sessions are not guarded by tokens (not_token_mode).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}, "503": {"$ref": "#/components/responses/StorageUnavailable"}}}
    }
  }
}
"""#
}
