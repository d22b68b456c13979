// RUN: fbl-opt %s -split-input-file -verify-diagnostics

#cp = #fbl.channel_packed<packed = 1>
func.func @grid_not_multiple(%x: tensor<4x8xf32, #cp>) {
  %e = tensor.empty() : tensor<4x8xf32, #cp>
  // expected-error @+1 {{'fbl.dispatch' op grid [6, 4, 1] is not a multiple of workgroup [4, 4, 1]}}
  %r = fbl.dispatch @k ins(%x : tensor<4x8xf32, #cp>) outs(%e : tensor<4x8xf32, #cp>) grid [6, 4, 1] workgroup [4, 4, 1] {
  ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
    fbl.kernel_return
  } -> tensor<4x8xf32, #cp>
  return
}

// -----

#cp = #fbl.channel_packed<packed = 1>
func.func @grid_sizes(%x: tensor<4x8xf32, #cp>) {
  %e = tensor.empty() : tensor<4x8xf32, #cp>
  // expected-error @+1 {{'fbl.dispatch' op grid and workgroup need 3 sizes each}}
  %r = fbl.dispatch @k ins(%x : tensor<4x8xf32, #cp>) outs(%e : tensor<4x8xf32, #cp>) grid [2, 4] workgroup [2, 4, 1] {
  ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
    fbl.kernel_return
  } -> tensor<4x8xf32, #cp>
  return
}

// -----

#cp = #fbl.channel_packed<packed = 1>
func.func @body_args(%x: tensor<4x8xf32, #cp>) {
  %e = tensor.empty() : tensor<4x8xf32, #cp>
  // expected-error @+1 {{'fbl.dispatch' op body arguments must have the types of ins and outs}}
  %r = fbl.dispatch @k ins(%x : tensor<4x8xf32, #cp>) outs(%e : tensor<4x8xf32, #cp>) grid [2, 4, 1] workgroup [2, 4, 1] {
  ^bb0(%o: tensor<4x8xf32, #cp>):
    fbl.kernel_return
  } -> tensor<4x8xf32, #cp>
  return
}

// -----

func.func @unencoded(%x: tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{'fbl.dispatch' op operands must carry fbl layout encodings}}
  %r = fbl.dispatch @k ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) grid [1, 1, 1] workgroup [1, 1, 1] {
  ^bb0(%a: tensor<4x8xf32>, %o: tensor<4x8xf32>):
    fbl.kernel_return
  } -> tensor<4x8xf32>
  return
}

// -----

#cp = #fbl.channel_packed<packed = 1>
func.func @texel_of_buffer(%x: tensor<8xf32, #fbl.buffer>) {
  %e = tensor.empty() : tensor<4x8xf32, #cp>
  %r = fbl.dispatch @k ins(%x : tensor<8xf32, #fbl.buffer>) outs(%e : tensor<4x8xf32, #cp>) grid [1, 1, 1] workgroup [1, 1, 1] {
  ^bb0(%a: tensor<8xf32, #fbl.buffer>, %o: tensor<4x8xf32, #cp>):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'fbl.load_texel' op needs an image, got a buffer}}
    %t = fbl.load_texel %a[%c0, %c0, %c0] : tensor<8xf32, #fbl.buffer>
    fbl.kernel_return
  } -> tensor<4x8xf32, #cp>
  return
}

// -----

#cp = #fbl.channel_packed<packed = 1>
func.func @write_input(%x: tensor<4x8xf32, #cp>) {
  %e = tensor.empty() : tensor<4x8xf32, #cp>
  %r = fbl.dispatch @k ins(%x : tensor<4x8xf32, #cp>) outs(%e : tensor<4x8xf32, #cp>) grid [1, 1, 1] workgroup [1, 1, 1] {
  ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
    %c0 = arith.constant 0 : index
    %t = fbl.load_texel %a[%c0, %c0, %c0] : tensor<4x8xf32, #cp>
    // expected-error @+1 {{'fbl.store_texel' op writes an input image}}
    fbl.store_texel %t, %a[%c0, %c0, %c0] : tensor<4x8xf32, #cp>
    fbl.kernel_return
  } -> tensor<4x8xf32, #cp>
  return
}

// -----

#cp = #fbl.channel_packed<packed = 1>
func.func @read_output(%x: tensor<4x8xf32, #cp>) {
  %e = tensor.empty() : tensor<4x8xf32, #cp>
  %r = fbl.dispatch @k ins(%x : tensor<4x8xf32, #cp>) outs(%e : tensor<4x8xf32, #cp>) grid [1, 1, 1] workgroup [1, 1, 1] {
  ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'fbl.load_texel' op reads an output image}}
    %t = fbl.load_texel %o[%c0, %c0, %c0] : tensor<4x8xf32, #cp>
    fbl.kernel_return
  } -> tensor<4x8xf32, #cp>
  return
}

// -----

func.func @element_type(%x: tensor<8xi64, #fbl.buffer>) {
  %e = tensor.empty() : tensor<8xf32, #fbl.buffer>
  %r = fbl.dispatch @k ins(%x : tensor<8xi64, #fbl.buffer>) outs(%e : tensor<8xf32, #fbl.buffer>) grid [1, 1, 1] workgroup [1, 1, 1] {
  ^bb0(%a: tensor<8xi64, #fbl.buffer>, %o: tensor<8xf32, #fbl.buffer>):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'fbl.load_element' op loads 'f32' from a buffer of 'i64'}}
    %v = fbl.load_element %a[%c0] : tensor<8xi64, #fbl.buffer> -> f32
    fbl.kernel_return
  } -> tensor<8xf32, #fbl.buffer>
  return
}

// -----

func.func @outside(%x: tensor<8xf32, #fbl.buffer>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'fbl.load_element' op accesses a value that is not a tensor argument of its fbl.dispatch}}
  %v = fbl.load_element %x[%c0] : tensor<8xf32, #fbl.buffer> -> f32
  return
}

// -----

// expected-error @+1 {{'fbl.slot' is a non-negative integer on tensor.empty}}
%0 = arith.constant {fbl.slot = 1} 0.0 : f32

// -----

// expected-error @+1 {{'fbl.own_launch' is a unit attribute on fbl.dispatch}}
%0 = arith.constant {fbl.own_launch} 0.0 : f32

// -----

// expected-error @+1 {{'fbl.gemm' belongs on fbl.dispatch and gives six positive numbers a GEMM (batch, m, n, k, and a work-group's rows and columns of C)}}
%0 = arith.constant {fbl.gemm = array<i64: 1, 8, 8, 4, 8, 8>} 0.0 : f32

// -----

#cp = #fbl.channel_packed<packed = 1>
func.func @gemm_five_numbers(%x: tensor<4x8xf32, #cp>, %e: tensor<4x8xf32, #cp>) {
  // expected-error @+1 {{'fbl.gemm' belongs on fbl.dispatch and gives six positive numbers a GEMM}}
  %r = fbl.dispatch @k ins(%x : tensor<4x8xf32, #cp>) outs(%e : tensor<4x8xf32, #cp>) grid [2, 1, 1] workgroup [2, 1, 1] attributes {fbl.gemm = array<i64: 1, 4, 8, 4, 8>} {
  ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
    fbl.kernel_return
  } -> tensor<4x8xf32, #cp>
  return
}

// -----

#cp = #fbl.channel_packed<packed = 1>
func.func @gemm_zero_rows(%x: tensor<4x8xf32, #cp>, %e: tensor<4x8xf32, #cp>) {
  // expected-error @+1 {{'fbl.gemm' belongs on fbl.dispatch and gives six positive numbers a GEMM}}
  %r = fbl.dispatch @k ins(%x : tensor<4x8xf32, #cp>) outs(%e : tensor<4x8xf32, #cp>) grid [2, 1, 1] workgroup [2, 1, 1] attributes {fbl.gemm = array<i64: 1, 0, 8, 4, 8, 8>} {
  ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
    fbl.kernel_return
  } -> tensor<4x8xf32, #cp>
  return
}

// -----

// expected-error @+1 {{'fbl.reduction_chunks' is a unit attribute on tensor.expand_shape}}
%0 = arith.constant {fbl.reduction_chunks} 0.0 : f32

// -----

// expected-error @+1 {{'fbl.memory_plan' must give peak_bytes}}
func.func @f() attributes {fbl.memory_plan = {objects = 1}} {
  return
}

// -----

// expected-error @+1 {{'fbl.kernel' must give register_tile and one read kind per operand}}
%0 = arith.constant {fbl.kernel = {reads = []}} 0.0 : f32

// -----

func.func @barrier_outside_kernel() {
  // expected-error @+1 {{'fbl.barrier' op must be inside an fbl.dispatch body}}
  fbl.barrier
  return
}

// -----

// expected-error @+1 {{'fbl.estimate' belongs on fbl.dispatch and gives fetches, misses, writes (non-negative integers) and time_ns}}
%0 = arith.constant {fbl.estimate = {fetches = 1, misses = 0, writes = 1, time_ns = 1.0}} 0.0 : f32

// -----

#cp = #fbl.channel_packed<packed = 1>
func.func @negative_estimate(%x: tensor<4x8xf32, #cp>) -> tensor<4x8xf32, #cp> {
  %e = tensor.empty() : tensor<4x8xf32, #cp>
  // expected-error @+1 {{'fbl.estimate' belongs on fbl.dispatch and gives fetches, misses, writes (non-negative integers) and time_ns}}
  %r = fbl.dispatch @k ins(%x : tensor<4x8xf32, #cp>) outs(%e : tensor<4x8xf32, #cp>) grid [4, 4, 1] workgroup [4, 4, 1] attributes {fbl.estimate = {fetches = -1, misses = 0, writes = 8, time_ns = 1.0}} {
  ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
  } -> tensor<4x8xf32, #cp>
  return %r : tensor<4x8xf32, #cp>
}

// -----

#cp = #fbl.channel_packed<packed = 1>
// expected-error @+1 {{'fbl.storage' is f16 on a tensor.empty of f32}}
%0 = tensor.empty() {fbl.storage = f32} : tensor<4x8xf32, #cp>

// -----

// expected-error @+1 {{'fbl.storage' is f16 on an f32 tensor argument}}
func.func @f(%x: tensor<4xi64> {fbl.storage = f16}) {
  return
}

// -----

#cp = #fbl.channel_packed<packed = 1>
func.func @variant_args(%x: tensor<4x8xf32, #cp>) {
  %e = tensor.empty() : tensor<4x8xf32, #cp>
  // expected-error @+1 {{'fbl.dispatch' op variant #1 arguments must have the types of ins and outs}}
  %r = fbl.dispatch @k ins(%x : tensor<4x8xf32, #cp>) outs(%e : tensor<4x8xf32, #cp>) grid [2, 4, 1] workgroup [2, 4, 1] {
  ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
    fbl.kernel_return
  } variants {
  ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
    fbl.kernel_return
  }, {
  ^bb0(%o: tensor<4x8xf32, #cp>):
    fbl.kernel_return
  } -> tensor<4x8xf32, #cp>
  return
}

// -----

#cp = #fbl.channel_packed<packed = 1>
func.func @variant_access(%x: tensor<4x8xf32, #cp>) {
  %e = tensor.empty() : tensor<4x8xf32, #cp>
  %r = fbl.dispatch @k ins(%x : tensor<4x8xf32, #cp>) outs(%e : tensor<4x8xf32, #cp>) grid [2, 4, 1] workgroup [2, 4, 1] {
  ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
    fbl.kernel_return
  } variants {
  ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
    %c0 = arith.constant 0 : index
    %t = fbl.load_texel %a[%c0, %c0, %c0] : tensor<4x8xf32, #cp>
    // expected-error @+1 {{'fbl.store_texel' op writes an input image}}
    fbl.store_texel %t, %a[%c0, %c0, %c0] : tensor<4x8xf32, #cp>
    fbl.kernel_return
  } -> tensor<4x8xf32, #cp>
  return
}
