/// The browser client roomd serves over HTTP (PROTOCOL.md section 9):
/// `GET /client/roomd.js` (the ES module) and `GET /client/` (a blank page
/// on roomd's origin that loads it as `window.roomd`). Both files live next
/// to this one and are compiled into the binary (SwiftPM `embedInCode`), so
/// the repository's file is the single source and the binary needs nothing
/// beside it at run time.
enum ClientFiles {
    static let module = HTTPResponse(
        status: 200,
        body: PackageResources.roomd_js,
        contentType: "text/javascript; charset=utf-8"
    )
    static let page = HTTPResponse(
        status: 200,
        body: PackageResources.index_html,
        contentType: "text/html; charset=utf-8"
    )
}
