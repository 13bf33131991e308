package redistest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// WriteTLSFiles writes a private CA (ca.crt) and a certificate for 127.0.0.1 it signed
// (redis.crt, redis.key) into dir, for a redis-server started with --tls-port and those
// files: no client trusts it unless given the CA, which the returned pool holds.
func WriteTLSFiles(t testing.TB, dir string) *x509.CertPool {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("redistest: TLS files: %v", err)
		}
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "redistest CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	must(err)
	caCert, err := x509.ParseCertificate(caDER)
	must(err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	must(err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	must(err)
	for name, block := range map[string]*pem.Block{
		"ca.crt":    {Type: "CERTIFICATE", Bytes: caDER},
		"redis.crt": {Type: "CERTIFICATE", Bytes: leafDER},
		"redis.key": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		must(os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600))
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return pool
}
