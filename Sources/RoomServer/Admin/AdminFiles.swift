/// The producer's console (1.3, PROTOCOL.md section 32): `GET /admin/` and
/// its CSS and JavaScript modules. The files live next to this one and are
/// compiled into the binary (SwiftPM `embedInCode`), as ClientFiles.swift
/// does for roomd.js: every node of a cluster serves the same console, with
/// nothing beside the binary and nothing fetched from elsewhere. The files
/// need no token; the page asks for a management token and talks only to
/// the REST API and the feed. `settings.admin.enabled: false` turns it off.
enum AdminFiles {
    static let prefix = "/admin/"

    /// On every /admin/ answer: only roomd's own origin (no inline script or
    /// style), never framed, no Referer leaves the page, no type sniffing;
    /// revalidated so a new binary's files are seen at the next load.
    static let headers = [
        HTTPHeader(name: "content-security-policy", value: "default-src 'self'"),
        HTTPHeader(name: "x-frame-options", value: "DENY"),
        HTTPHeader(name: "referrer-policy", value: "no-referrer"),
        HTTPHeader(name: "x-content-type-options", value: "nosniff"),
        HTTPHeader(name: "cache-control", value: "no-cache"),
    ]

    private static func file(_ body: [UInt8], _ contentType: String) -> HTTPResponse {
        HTTPResponse(status: 200, body: body, contentType: contentType, headers: headers)
    }

    /// path → file; `/admin` itself is sent on to `/admin/` (the modules' relative paths need the slash).
    static let files: [String: HTTPResponse] = [
        "/admin/": file(PackageResources.admin_html, "text/html; charset=utf-8"),
        "/admin/index.html": file(PackageResources.admin_html, "text/html; charset=utf-8"),
        "/admin/admin.css": file(PackageResources.admin_css, "text/css; charset=utf-8"),
        "/admin/admin.js": file(PackageResources.admin_js, "text/javascript; charset=utf-8"),
        "/admin/api.js": file(PackageResources.api_js, "text/javascript; charset=utf-8"),
    ]

    static func handles(_ path: String) -> Bool { path == "/admin" || path.hasPrefix(prefix) }

    /// The answer for a GET of `path` (`handles(path)`), or 404 when the console is off.
    static func serve(_ request: HTTPRequest, enabled: Bool) -> HTTPResponse {
        guard enabled else {
            return .error(404, code: 404, "no route for \(request.path): the console is off (settings.admin.enabled)")
        }
        guard request.method == .get else {
            return .error(404, code: 404, "no route for \(request.method.rawValue) \(request.path)")
        }
        if request.path == "/admin" {
            var moved = HTTPResponse(status: 308, body: [], contentType: "text/plain; charset=utf-8", headers: headers)
            moved.headers.append(HTTPHeader(name: "location", value: prefix))
            return moved
        }
        guard var found = files[request.path] else {
            return .error(404, code: 404, "no route for \(request.path)")
        }
        found.headers = headers
        return found
    }
}
