import Foundation
import RoomdTesting
import Testing

/// `make install` and `make deb` (issue 25, item 8; issue 36's "operator's
/// other tools"), from the debug binary the tests already run (`BIN=`, with
/// a `swift` on the PATH that fails the run if anything calls it: nothing is
/// built): the files, the secret, the systemd unit, completions and the man
/// page, the package's fields and maintainer scripts, lintian where it is
/// installed. `.serialized`: each writes a staging tree of the whole binary;
/// one at a time keeps the disk and the 2 cores for the others.
@Suite(.serialized, .disabled(if: Daemon.clusterRun, "no daemon involved: once, in the single-daemon run"))
struct PackagingTests {
    func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roomd-pkg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// `make -s -C ROOT ARGUMENTS` with a `swift` first on the PATH that
    /// writes `swift-called` into `scratch` and fails: `swiftCalled` says
    /// whether anything tried to build.
    func make(
        _ arguments: [String],
        in scratch: URL,
        environment extra: [String: String] = [:],
        timeout: Double = 60
    ) throws -> (status: Int32, out: String, err: String, swiftCalled: Bool) {
        let stubs = scratch.appendingPathComponent("stubs")
        try FileManager.default.createDirectory(at: stubs, withIntermediateDirectories: true)
        let marker = scratch.appendingPathComponent("swift-called")
        let swift = stubs.appendingPathComponent("swift")
        try "#!/bin/sh\necho \"$@\" >> '\(marker.path)'\nexit 3\n".write(to: swift, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: swift.path)
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = stubs.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment.removeValue(forKey: "MAKEFLAGS")
        for (key, value) in extra { environment[key] = value }
        let run = try runCommand(
            "/usr/bin/make",
            ["-s", "-C", Daemon.packageRoot.path] + arguments,
            environment: environment,
            timeout: timeout
        )
        return (run.status, run.out, run.err, FileManager.default.fileExists(atPath: marker.path))
    }

    /// `make install` of the debug binary into `stage` (PREFIX=/usr).
    func install(into stage: URL, _ more: [String] = []) throws -> (status: Int32, err: String, swiftCalled: Bool) {
        let run = try make(
            ["install", "DESTDIR=\(stage.path)/root", "PREFIX=/usr", "BIN=\(Daemon.binary)"] + more,
            in: stage
        )
        return (run.status, run.err, run.swiftCalled)
    }

    func permissions(_ url: URL) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
    }

    @Test func makeInstallLaysOutTheBinaryTemplateAndUnit() throws {
        let scratch = try scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let make = try install(into: scratch)
        #expect(make.status == 0, "\(make.err)")
        #expect(!make.swiftCalled, "BIN= installs that binary: nothing is built")
        let stage = scratch.appendingPathComponent("root")
        let installed = stage.appendingPathComponent("usr/bin/roomd").path
        #expect(FileManager.default.isExecutableFile(atPath: installed))
        let version = try runCommand(installed, ["--version"])
        #expect(version.out.hasPrefix("roomd "))
        let shipped = try String(contentsOfFile: Daemon.shippedConfig, encoding: .utf8)
        for template in ["etc/roomd/roles.json", "usr/share/roomd/roles.json"] {
            #expect(
                try String(contentsOf: stage.appendingPathComponent(template), encoding: .utf8) == shipped,
                "\(template) is the shipped template"
            )
        }
        let check = try runCommand(
            installed,
            ["check-config", stage.appendingPathComponent("etc/roomd/roles.json").path]
        )
        #expect(check.status == 0, "\(check.err)")
        let unit = try String(
            contentsOf: stage.appendingPathComponent("usr/lib/systemd/system/roomd.service"),
            encoding: .utf8
        )
        #expect(unit.contains("\nExecStart=/usr/bin/roomd --config /etc/roomd/roles.json --secret-file %d/secret "))
        #expect(unit.contains("\nLoadCredential=secret:/etc/roomd/secret\n") && unit.contains("\n[Install]\n"))
        #expect(!unit.contains("@"), "every placeholder is filled in")
        // A cluster node drains on stop (docs/CLUSTER.md, "Rolling restart"): systemd waits longer than the drain.
        #expect(unit.contains(" --drain-timeout 10\n") && unit.contains("\nTimeoutStopSec=20\n"))
        #expect(unit.contains("\nKillSignal=SIGTERM\n"))

        let missing = try self.make(
            ["install", "DESTDIR=\(scratch.path)/other", "BIN=/nonexistent/roomd"],
            in: scratch
        )
        #expect(missing.status != 0 && missing.err.contains("BIN=/nonexistent/roomd is not an executable file"))
        #expect(!missing.swiftCalled)
    }

    /// The unit needs SYSCONFDIR/roomd/secret: the install makes one (root-only,
    /// 48 random bytes in base64), once; a second install keeps it.
    @Test func makeInstallCreatesTheSecretOnceAndNeverOverwritesIt() throws {
        let scratch = try scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        #expect(try install(into: scratch).status == 0)
        let secret = scratch.appendingPathComponent("root/etc/roomd/secret")
        let first = try Data(contentsOf: secret)
        #expect(first.count >= 32 && Data(base64Encoded: first)?.count == 48, "48 random bytes, base64")
        #expect(try permissions(secret) == 0o600, "only its owner reads it")
        let token = try runCommand(Daemon.binary, ["token", "--management", "--secret-file", secret.path])
        #expect(token.status == 0, "roomd accepts it: \(token.err)")

        #expect(try install(into: scratch).status == 0)
        #expect(try Data(contentsOf: secret) == first, "a second install keeps the secret")
        let other = scratch.appendingPathComponent("again")
        #expect(try install(into: other).status == 0)
        #expect(try Data(contentsOf: other.appendingPathComponent("root/etc/roomd/secret")) != first, "random")
        let none = scratch.appendingPathComponent("none")
        #expect(try install(into: none, ["MAKE_SECRET=no"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: none.appendingPathComponent("root/etc/roomd/secret").path))
    }

    /// SYSCONFDIR=/opt/etc: the config and the secret go there, and the unit reads them there.
    @Test func makeInstallWritesTheUnitWithSysconfdir() throws {
        let scratch = try scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        #expect(try install(into: scratch, ["SYSCONFDIR=/opt/etc"]).status == 0)
        let stage = scratch.appendingPathComponent("root")
        for file in ["opt/etc/roomd/roles.json", "opt/etc/roomd/secret"] {
            #expect(FileManager.default.fileExists(atPath: stage.appendingPathComponent(file).path), "\(file)")
        }
        #expect(!FileManager.default.fileExists(atPath: stage.appendingPathComponent("etc").path))
        let unit = try String(
            contentsOf: stage.appendingPathComponent("usr/lib/systemd/system/roomd.service"),
            encoding: .utf8
        )
        #expect(unit.contains("\nExecStart=/usr/bin/roomd --config /opt/etc/roomd/roles.json --secret-file %d/secret "))
        #expect(unit.contains("\nLoadCredential=secret:/opt/etc/roomd/secret\n"))
        #expect(!unit.replacingOccurrences(of: "/opt/etc/roomd", with: "").contains("/etc/roomd"), "\(unit)")
    }

    /// Shell completions (swift-argument-parser's) and roomd(1), from the binary installed.
    @Test func makeInstallAddsCompletionsAndTheManPage() throws {
        let scratch = try scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        #expect(try install(into: scratch).status == 0)
        let share = scratch.appendingPathComponent("root/usr/share")
        let bash = share.appendingPathComponent("bash-completion/completions/roomd")
        let bashText = try String(contentsOf: bash, encoding: .utf8)
        #expect(bashText.contains("complete ") && bashText.contains("roomd") && bashText.contains("bans"))
        #expect(try runCommand("/bin/bash", ["-n", bash.path]).status == 0, "bash parses it")
        let zsh = try String(contentsOf: share.appendingPathComponent("zsh/vendor-completions/_roomd"), encoding: .utf8)
        #expect(zsh.hasPrefix("#compdef roomd"))
        let fish = try String(
            contentsOf: share.appendingPathComponent("fish/vendor_completions.d/roomd.fish"),
            encoding: .utf8
        )
        #expect(fish.contains("complete -c 'roomd'"), "fish completes roomd")

        let page = share.appendingPathComponent("man/man1/roomd.1")
        let roff = try String(contentsOf: page, encoding: .utf8)
        #expect(roff.hasPrefix(".TH ROOMD 1 "))
        for section in ["roomd rooms create", "roomd bans add", "roomd stream set", "roomd feed", "roomd serve"] {
            #expect(roff.contains(".SS \"\(section)\"\n"), "the page has \(section)")
        }
        #expect(roff.contains("/etc/roomd/secret"))
        for path in [bash, page] { #expect(try permissions(path) == 0o644) }
        // man renders it without a warning (what lintian checks), where man is installed.
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/man") else { return }
        var environment = ProcessInfo.processInfo.environment
        environment["MANWIDTH"] = "80"
        let rendered = try runCommand(
            "/usr/bin/man",
            ["--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", page.path],
            environment: environment,
            timeout: 60
        )
        #expect(rendered.status == 0 && rendered.err.isEmpty, "\(rendered.err)")
    }

    /// `make deb BIN=…` into DISTDIR (gzip, level 1: quick): the path of the package.
    func buildDeb(in scratch: URL) throws -> String {
        let build = try make(
            ["deb", "BIN=\(Daemon.binary)", "DISTDIR=\(scratch.path)/dist"],
            in: scratch,
            environment: ["COMPRESS": "gzip", "LEVEL": "1"],
            timeout: 120
        )
        #expect(build.status == 0, "\(build.err)")
        #expect(!build.swiftCalled, "BIN= packages that binary: nothing is built")
        let deb = build.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(deb.hasSuffix(".deb") && FileManager.default.fileExists(atPath: deb), "\(build)")
        return deb
    }

    @Test func makeDebBuildsAPackageDpkgAndLintianAccept() throws {
        let scratch = try scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let deb = try buildDeb(in: scratch)

        let contents = try runCommand("/usr/bin/dpkg-deb", ["--contents", deb])
        for path in [
            "./usr/bin/roomd", "./etc/roomd/roles.json", "./usr/share/roomd/roles.json",
            "./usr/lib/systemd/system/roomd.service", "./usr/share/doc/roomd/copyright",
            "./usr/share/doc/roomd/changelog.gz", "./usr/share/bash-completion/completions/roomd",
            "./usr/share/zsh/vendor-completions/_roomd", "./usr/share/fish/vendor_completions.d/roomd.fish",
            "./usr/share/man/man1/roomd.1.gz",
        ] {
            #expect(contents.out.contains(" \(path)\n"), "the package lacks \(path)")
        }
        #expect(!contents.out.contains("./etc/roomd/secret"), "no secret in the package: each machine makes its own")
        #expect(contents.out.contains("-rwxr-xr-x root/root"), "files belong to root")
        let fields = try runCommand("/usr/bin/dpkg-deb", ["--field", deb, "Package", "Depends"])
        #expect(fields.out.hasPrefix("Package: roomd\n"))
        #expect(fields.out.contains("libwebsockets17") && fields.out.contains("libnats"), "\(fields.out)")
        let control = try runCommand("/usr/bin/dpkg-deb", ["--ctrl-tarfile", deb])
        #expect(control.status == 0)
        let info = try runCommand("/usr/bin/dpkg-deb", ["--info", deb])
        for script in ["conffiles", "postinst", "prerm", "postrm"] {
            #expect(info.out.contains(" \(script)"), "\(script): \(info.out)")
        }

        // lintian, where installed (apt-get install lintian): no error but those of a
        // debug binary (its RUNPATH into the toolchain; zlib inside Foundation).
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/lintian") else { return }
        let lintian = try runCommand("/usr/bin/lintian", [deb], timeout: 120)
        let errors = lintian.out.split(separator: "\n").filter { $0.hasPrefix("E: ") }
        let expected = ["custom-library-search-path", "embedded-library zlib"]
        let unexpected = errors.filter { line in !expected.contains { line.contains($0) } }
        #expect(unexpected.isEmpty, "lintian: \(unexpected)")
        // Nothing at all about the man page, the completions or the maintainer scripts.
        let ours = lintian.out.split(separator: "\n").filter { line in
            ["manual-page", "manpage", "completion", "maintainer-script", "postrm", "prerm"].contains {
                line.contains($0)
            }
        }
        #expect(ours.isEmpty, "lintian: \(ours)")
    }

    /// The package's life as dpkg runs it, in a scratch root (`dpkg --root`,
    /// the maintainer scripts outside a chroot with `$DPKG_ROOT`): install
    /// makes the secret (0600), a reinstall keeps it, `remove` keeps it and
    /// the config (as `apt remove` does), `purge` removes both and /etc/roomd.
    @Test func dpkgInstallRemoveAndPurgeHandleTheSecret() throws {
        let scratch = try scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let deb = try buildDeb(in: scratch)
        let root = scratch.appendingPathComponent("root")
        let admin = root.appendingPathComponent("var/lib/dpkg")
        for directory in ["info", "updates", "triggers"] {
            try FileManager.default.createDirectory(
                at: admin.appendingPathComponent(directory),
                withIntermediateDirectories: true
            )
        }
        try Data().write(to: admin.appendingPathComponent("status"))
        func dpkg(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
            try runCommand(
                "/usr/bin/dpkg",
                [
                    "--root=\(root.path)", "--force-script-chrootless", "--force-not-root", "--force-depends",
                    "--log=/dev/null",
                ] + arguments,
                timeout: 120
            )
        }
        let secret = root.appendingPathComponent("etc/roomd/secret")
        let config = root.appendingPathComponent("etc/roomd/roles.json")
        let installed = try dpkg(["--install", deb])
        #expect(installed.status == 0, "\(installed.err)")
        let made = try Data(contentsOf: secret)
        let mode = try permissions(secret)
        #expect(Data(base64Encoded: made)?.count == 48 && mode == 0o600)
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("usr/bin/roomd").path))

        #expect(try dpkg(["--install", deb]).status == 0)
        #expect(try Data(contentsOf: secret) == made, "a reinstall (an upgrade) keeps the secret")
        let removed = try dpkg(["--remove", "roomd"])
        #expect(removed.status == 0, "\(removed.err)")
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("usr/bin/roomd").path))
        #expect(try Data(contentsOf: secret) == made, "remove keeps the secret")
        #expect(FileManager.default.fileExists(atPath: config.path), "remove keeps the config")
        let purged = try dpkg(["--purge", "roomd"])
        #expect(purged.status == 0, "\(purged.err)")
        #expect(!FileManager.default.fileExists(atPath: secret.path), "purge removes the secret")
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("etc/roomd").path))
    }
}
