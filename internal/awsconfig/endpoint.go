package awsconfig

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// InsecureEndpointFlag is the flag that lets a plain-http endpoint on
// another host carry signed requests.
const InsecureEndpointFlag = "--allow-insecure-endpoint"

func parseEndpoint(flag, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("%s %q is not a URL; pass e.g. http://127.0.0.1:5000", flag, raw)
	}
	return u, nil
}

// checkEndpoint refuses a plain-http endpoint on a host that is not this
// machine unless allowInsecure: every request carries the access key ID, a
// signature and any session token, and over http anyone on the path reads
// them (and the items).
func checkEndpoint(flag string, u *url.URL, allowInsecure bool) error {
	if !strings.EqualFold(u.Scheme, "http") || isLoopback(u.Hostname()) || allowInsecure {
		return nil
	}
	return fmt.Errorf("%s %s is plain http to %s, which is not this machine: requests would carry your credentials (access key ID, signature, session token) and items unencrypted; use https://%s, or pass %s if the network to it is trusted",
		flag, u.Redacted(), u.Hostname(), u.Host, InsecureEndpointFlag)
}

// isLoopback reports whether host (a URL's Hostname: no port, no brackets)
// is this machine: "localhost" or an IP address in 127.0.0.0/8 or ::1. A
// name that merely starts with "127." (127.evil.example) is not.
func isLoopback(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
