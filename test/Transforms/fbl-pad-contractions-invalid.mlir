// RUN: fbl-opt %s -fbl-pad-contractions="min-volume=-1" -verify-diagnostics

// expected-error @+1 {{fbl-pad-contractions: min-volume=-1 is not valid; it must be 0 or more}}
module {
}
