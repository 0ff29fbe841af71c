// Package config holds the options of the push-path PKI in the KCP: the
// backend, where the CA, trust bundle and certificates live, their lifetimes,
// the rotation timing and the names in the agent's certificate. Every option
// has a documented default and a flag (BindFlags), so that the operator lists
// them in one place.
package config
