// RUN: fbl-opt %s -fbl-merge-dispatches="max-kernels=0" -verify-diagnostics

// expected-error @+1 {{fbl-merge-dispatches: max-kernels must be positive, got 0}}
module {
  func.func @empty() {
    return
  }
}
