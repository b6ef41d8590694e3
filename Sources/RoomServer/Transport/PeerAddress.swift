#if canImport(Glibc)
import Glibc
#endif

/// Where a client connection comes from, as the per-address cap of unjoined
/// connections counts it: an IPv4 address, or an IPv6 /64 (one host's share
/// of a network, which it may spread over 2⁶⁴ addresses). An IPv4-mapped IPv6
/// address counts as its IPv4 address.
struct PeerAddress: Hashable, CustomStringConvertible {
    /// IPv4: 0. IPv6: the first 64 bits.
    private let high: UInt64
    /// IPv4: `0xFFFF_0000_0000 | address`. IPv6: 0.
    private let low: UInt64

    init(ipv4 address: UInt32) {
        high = 0
        low = 0xFFFF_0000_0000 | UInt64(address)
    }

    init(ipv6Prefix prefix: UInt64) {
        high = prefix
        low = 0
    }

    /// The peer of a connected socket; nil when it has none (or is not IP).
    init?(peerOf fd: Int32) {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard got == 0 else { return nil }
        self.init(storage)
    }

    init?(_ storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let address = withUnsafeBytes(of: &storage) {
                $0.load(fromByteOffset: MemoryLayout<sockaddr_in>.offset(of: \.sin_addr)!, as: UInt32.self)
            }
            self.init(ipv4: UInt32(bigEndian: address))
        case AF_INET6:
            let bytes = withUnsafeBytes(of: &storage) { raw in
                let start = MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr)!
                return Array(raw[start..<start + 16])
            }
            let prefix = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if prefix == 0, bytes[8..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
                self.init(ipv4: bytes[12..<16].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            } else {
                self.init(ipv6Prefix: prefix)
            }
        default:
            return nil
        }
    }

    var description: String {
        if high == 0, low >> 32 == 0xFFFF {
            let address = UInt32(truncatingIfNeeded: low)
            return [24, 16, 8, 0].map { "\((address >> $0) & 0xFF)" }.joined(separator: ".")
        }
        let groups = [48, 32, 16, 0].map { String((high >> UInt64($0)) & 0xFFFF, radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}

extension PeerAddress {
    /// A socket whose peer is not an IP address (or unknown): they share one count.
    static let unknown = PeerAddress(ipv6Prefix: 0)
}
