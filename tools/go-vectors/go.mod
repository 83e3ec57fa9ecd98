module aro-hcp-identity-status/tools/go-vectors

go 1.21
