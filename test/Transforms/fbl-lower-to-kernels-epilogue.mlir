// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels | FileCheck %s

// A GEMM whose only user is an elementwise op over its result computes that
// op too (its epilogue): the optimizer update W - lr * dW of a weight
// gradient. One kernel reads A, B and W (as 4x4 blocks, like C's init),
// applies the update to each accumulator and writes W's new value; dW is
// never stored.

// CHECK-LABEL: func.func @sgd_update_in_the_gemm(
// CHECK-SAME:    %[[A:[^:]+]]: tensor<8x12xf32, #fbl.channel_packed<packed = 1>>
// CHECK-SAME:    %[[B:[^:]+]]: tensor<12x16xf32, #fbl.channel_packed<packed = 0>>
// CHECK-SAME:    %[[W:[^:]+]]: tensor<8x16xf32, #fbl.channel_packed<packed = 0>>
// CHECK:         %[[R:.+]] = fbl.dispatch @k0_gemm ins(%[[A]], %[[B]], %[[W]] : {{.*}}) outs(%{{.*}} : tensor<8x16xf32, #fbl.channel_packed<packed = 0>>)
// CHECK:           scf.for
// CHECK:           }
// The update's operands: W's block (4 texels), then per element lr * dW.
// CHECK-COUNT-4:   fbl.load_texel %{{.*}} : tensor<8x16xf32, #fbl.channel_packed<packed = 0>>
// CHECK:           arith.constant 1.000000e-01 : f32
// CHECK-COUNT-16:  arith.subf
// CHECK-COUNT-4:   fbl.store_texel
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[R]]
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @sgd_update_in_the_gemm(%a: tensor<8x12xf32, #pc>, %b: tensor<12x16xf32, #pr>, %w: tensor<8x16xf32, #pr>) -> tensor<8x16xf32, #pr> {
    %zero = arith.constant 0.0 : f32
    %lr = arith.constant 0.1 : f32
    %e = tensor.empty() : tensor<8x16xf32, #pc>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc>
    %dw = linalg.matmul ins(%a, %b : tensor<8x12xf32, #pc>, tensor<12x16xf32, #pr>) outs(%z : tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc>
    %e2 = tensor.empty() : tensor<8x16xf32, #pr>
    %u = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%w, %dw : tensor<8x16xf32, #pr>, tensor<8x16xf32, #pc>) outs(%e2 : tensor<8x16xf32, #pr>) {
    ^bb0(%x: f32, %g: f32, %o: f32):
      %s = arith.mulf %g, %lr : f32
      %r = arith.subf %x, %s : f32
      linalg.yield %r : f32
    } -> tensor<8x16xf32, #pr>
    return %u : tensor<8x16xf32, #pr>
  }
}

// -----

// A GEMM result with another use is stored: no epilogue.

// CHECK-LABEL: func.func @result_with_two_uses_is_stored(
// CHECK:         %[[G:.+]] = fbl.dispatch @k0_gemm
// CHECK:         %[[U:.+]] = fbl.dispatch @k1_generic ins(%{{.*}}, %[[G]] :
// CHECK:         return %[[U]], %[[G]]
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @result_with_two_uses_is_stored(%a: tensor<8x12xf32, #pc>, %b: tensor<12x16xf32, #pr>, %w: tensor<8x16xf32, #pc>) -> (tensor<8x16xf32, #pc>, tensor<8x16xf32, #pc>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32, #pc>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc>
    %dw = linalg.matmul ins(%a, %b : tensor<8x12xf32, #pc>, tensor<12x16xf32, #pr>) outs(%z : tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc>
    %u = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%w, %dw : tensor<8x16xf32, #pc>, tensor<8x16xf32, #pc>) outs(%e : tensor<8x16xf32, #pc>) {
    ^bb0(%x: f32, %g: f32, %o: f32):
      %r = arith.subf %x, %g : f32
      linalg.yield %r : f32
    } -> tensor<8x16xf32, #pc>
    return %u, %dw : tensor<8x16xf32, #pc>, tensor<8x16xf32, #pc>
  }
}

// -----

// A consumer that reads a value computed after the GEMM runs on its own:
// the fused kernel would run where the GEMM is, before that value exists.

// CHECK-LABEL: func.func @operand_after_the_gemm_is_not_fused(
// CHECK:         fbl.dispatch @k0_gemm
// CHECK:         fbl.dispatch @k1_generic
// CHECK:         fbl.dispatch @k2_generic
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @operand_after_the_gemm_is_not_fused(%a: tensor<8x12xf32, #pc>, %b: tensor<12x16xf32, #pr>, %w: tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32, #pc>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc>
    %dw = linalg.matmul ins(%a, %b : tensor<8x12xf32, #pc>, tensor<12x16xf32, #pr>) outs(%z : tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc>
    %w2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%w : tensor<8x16xf32, #pc>) outs(%e : tensor<8x16xf32, #pc>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.mulf %x, %x : f32
      linalg.yield %r : f32
    } -> tensor<8x16xf32, #pc>
    %u = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%w2, %dw : tensor<8x16xf32, #pc>, tensor<8x16xf32, #pc>) outs(%e : tensor<8x16xf32, #pc>) {
    ^bb0(%x: f32, %g: f32, %o: f32):
      %r = arith.subf %x, %g : f32
      linalg.yield %r : f32
    } -> tensor<8x16xf32, #pc>
    return %u : tensor<8x16xf32, #pc>
  }
}

// -----

// A broadcast operand (a bias along n) is not read as 4x4 blocks: the
// consumer runs on its own.

// CHECK-LABEL: func.func @broadcast_operand_is_not_fused(
// CHECK:         fbl.dispatch @k0_gemm
// CHECK:         fbl.dispatch @k1_generic
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @broadcast_operand_is_not_fused(%a: tensor<8x12xf32, #pc>, %b: tensor<12x16xf32, #pr>, %bias: tensor<16xf32, #pr>) -> tensor<8x16xf32, #pc> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32, #pc>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc>
    %y = linalg.matmul ins(%a, %b : tensor<8x12xf32, #pc>, tensor<12x16xf32, #pr>) outs(%z : tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc>
    %u = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (j)>, #id], iterator_types = ["parallel", "parallel"]}
        ins(%y, %bias : tensor<8x16xf32, #pc>, tensor<16xf32, #pr>) outs(%e : tensor<8x16xf32, #pc>) {
    ^bb0(%x: f32, %c: f32, %o: f32):
      %r = arith.addf %x, %c : f32
      linalg.yield %r : f32
    } -> tensor<8x16xf32, #pc>
    return %u : tensor<8x16xf32, #pc>
  }
}

// -----

// A scalar the epilogue captures (a learning rate read from a tensor) is
// read again inside the fused kernel: the tensor is one more input.

// CHECK-LABEL: func.func @captured_scalar_read_in_the_kernel(
// CHECK-SAME:    %[[A:[^:]+]]: tensor<8x12xf32
// CHECK-SAME:    %[[B:[^:]+]]: tensor<12x16xf32
// CHECK-SAME:    %[[W:[^:]+]]: tensor<8x16xf32
// CHECK-SAME:    %[[T:[^:]+]]: tensor<f32
// CHECK:         fbl.dispatch @k0_gemm ins(%[[A]], %[[B]], %[[W]], %[[T]] :
// CHECK:           fbl.load_element
// CHECK-NOT:     fbl.dispatch
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @captured_scalar_read_in_the_kernel(%a: tensor<8x12xf32, #pc>, %b: tensor<12x16xf32, #pr>, %w: tensor<8x16xf32, #pc>, %t: tensor<f32, #fbl.buffer>) -> tensor<8x16xf32, #pc> {
    %zero = arith.constant 0.0 : f32
    %lr = tensor.extract %t[] : tensor<f32, #fbl.buffer>
    %e = tensor.empty() : tensor<8x16xf32, #pc>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc>
    %dw = linalg.matmul ins(%a, %b : tensor<8x12xf32, #pc>, tensor<12x16xf32, #pr>) outs(%z : tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc>
    %u = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%w, %dw : tensor<8x16xf32, #pc>, tensor<8x16xf32, #pc>) outs(%e : tensor<8x16xf32, #pc>) {
    ^bb0(%x: f32, %g: f32, %o: f32):
      %s = arith.mulf %g, %lr : f32
      %r = arith.subf %x, %s : f32
      linalg.yield %r : f32
    } -> tensor<8x16xf32, #pc>
    return %u : tensor<8x16xf32, #pc>
  }
}
