// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels | FileCheck %s
// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels=gemm-epilogues=none | FileCheck %s --check-prefix=NONE
// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels=gemm-epilogues=sole-reader | FileCheck %s --check-prefix=SOLE
// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels=gemm-epilogues=same-shape | FileCheck %s --check-prefix=SAME
// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels=gemm-epilogues=sole-same-shape | FileCheck %s --check-prefix=BEFORE

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
// Without epilogues (gemm-epilogues=none) the update is a kernel of its
// own; every other kind computes it in the GEMM's kernel.
// NONE-LABEL:  func.func @sgd_update_in_the_gemm(
// NONE:          %[[C:.+]] = fbl.dispatch @k0_gemm
// NONE:          fbl.dispatch @k1_generic ins(%{{.*}}, %[[C]] :
// SOLE-LABEL:  func.func @sgd_update_in_the_gemm(
// SOLE:          fbl.dispatch @k0_gemm
// SOLE-NOT:      fbl.dispatch
// SOLE:          return
// BEFORE-LABEL: func.func @sgd_update_in_the_gemm(
// BEFORE:        fbl.dispatch @k0_gemm
// BEFORE-NOT:    fbl.dispatch
// BEFORE:        return
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

// A GEMM result with another reader too: the kernel stores it (C, its
// first result) for that reader and the epilogue's result (its second), as
// a forward activation's GEMM stores its input, which the backward re-reads,
// and the activation. No kernel of the epilogue's own.

// CHECK-LABEL: func.func @result_with_two_uses_is_stored_too(
// CHECK:         %[[R:.+]]:2 = fbl.dispatch @k0_gemm ins({{.*}}) outs(%{{.*}}, %{{.*}} : tensor<8x16xf32, #fbl.channel_packed<packed = 1>>, tensor<8x16xf32, #fbl.channel_packed<packed = 1>>)
// CHECK:           ^bb0({{.*}}, %[[C:.+]]: tensor<8x16xf32, #fbl.channel_packed<packed = 1>>, %[[U:.+]]: tensor<8x16xf32, #fbl.channel_packed<packed = 1>>):
// CHECK:           scf.for
// CHECK-COUNT-4:   fbl.store_texel %{{.*}}, %[[C]][
// CHECK-COUNT-16:  arith.subf
// CHECK-COUNT-4:   fbl.store_texel %{{.*}}, %[[U]][
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[R]]#1, %[[R]]#0
// A reader beside others is left to a kernel of its own where only sole
// readers are epilogues (sole-reader, sole-same-shape); same-shape keeps it.
// SOLE-LABEL:  func.func @result_with_two_uses_is_stored_too(
// SOLE:          %[[C:.+]] = fbl.dispatch @k0_gemm {{.*}} outs(%{{.*}} : tensor<8x16xf32, #fbl.channel_packed<packed = 1>>)
// SOLE:          fbl.dispatch @k1_generic ins(%{{.*}}, %[[C]] :
// BEFORE-LABEL: func.func @result_with_two_uses_is_stored_too(
// BEFORE:        fbl.dispatch @k1_generic
// SAME-LABEL:  func.func @result_with_two_uses_is_stored_too(
// SAME:          fbl.dispatch @k0_gemm {{.*}} outs(%{{.*}}, %{{.*}} :
// SAME-NOT:      fbl.dispatch
// SAME:          return
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @result_with_two_uses_is_stored_too(%a: tensor<8x12xf32, #pc>, %b: tensor<12x16xf32, #pr>, %w: tensor<8x16xf32, #pc>) -> (tensor<8x16xf32, #pc>, tensor<8x16xf32, #pc>) {
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

// A broadcast operand (a bias along n, packed along n) is read as one
// texel per block: its channels are the block's columns, the same for
// every row. No kernel of the bias add's own.

// CHECK-LABEL: func.func @bias_along_n_in_the_gemm(
// CHECK:         %[[R:.+]] = fbl.dispatch @k0_gemm ins(%{{.*}}, %{{.*}}, %{{.*}} : {{.*}}, tensor<16xf32, #fbl.channel_packed<packed = 0>>)
// CHECK:           scf.for
// CHECK:           }
// CHECK:           %[[T:.+]] = fbl.load_texel %{{.*}} : tensor<16xf32, #fbl.channel_packed<packed = 0>>
// CHECK-NEXT:      vector.extract %[[T]][0]
// CHECK-NEXT:      vector.extract %[[T]][1]
// CHECK-NEXT:      vector.extract %[[T]][2]
// CHECK-NEXT:      vector.extract %[[T]][3]
// CHECK-NEXT:      vector.extract %[[T]][0]
// CHECK-NOT:       fbl.load_texel
// CHECK-COUNT-16:  arith.addf
// CHECK-COUNT-4:   fbl.store_texel
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[R]]
// An input that drops m or n is not read in the kernel under same-shape
// (and sole-same-shape): the bias add is a kernel of its own.
// SAME-LABEL:  func.func @bias_along_n_in_the_gemm(
// SAME:          %[[C:.+]] = fbl.dispatch @k0_gemm
// SAME:          fbl.dispatch @k1_generic ins(%[[C]], %{{.*}} :
// BEFORE-LABEL: func.func @bias_along_n_in_the_gemm(
// BEFORE:        fbl.dispatch @k1_generic
// SOLE-LABEL:  func.func @bias_along_n_in_the_gemm(
// SOLE:          fbl.dispatch @k0_gemm
// SOLE-NOT:      fbl.dispatch
// SOLE:          return
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @bias_along_n_in_the_gemm(%a: tensor<8x12xf32, #pc>, %b: tensor<12x16xf32, #pr>, %bias: tensor<16xf32, #pr>) -> tensor<8x16xf32, #pc> {
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

// -----

// Of several readers, the first that can be an epilogue is: the first here
// reads a value computed after the GEMM. C and the epilogue's result are
// stored each in its own layout (packed along n, and along m).

// CHECK-LABEL: func.func @first_reader_that_can_be_one(
// CHECK:         %[[R:.+]]:2 = fbl.dispatch @k0_gemm ins({{.*}}) outs(%{{.*}}, %{{.*}} : tensor<8x16xf32, #fbl.channel_packed<packed = 1>>, tensor<8x16xf32, #fbl.channel_packed<packed = 0>>)
// CHECK:           ^bb0({{.*}}, %[[C:.+]]: tensor<8x16xf32, #fbl.channel_packed<packed = 1>>, %[[U:.+]]: tensor<8x16xf32, #fbl.channel_packed<packed = 0>>):
// CHECK-COUNT-4:   fbl.store_texel %{{.*}}, %[[C]][
// CHECK-COUNT-16:  arith.mulf
// CHECK-COUNT-4:   fbl.store_texel %{{.*}}, %[[U]][
// CHECK:         %[[L:.+]] = fbl.dispatch @k1_generic
// CHECK:         %[[V:.+]] = fbl.dispatch @k2_generic ins(%{{.*}}, %[[R]]#0, %[[L]] :
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[V]], %[[R]]#1
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @first_reader_that_can_be_one(%a: tensor<8x12xf32, #pc>, %b: tensor<12x16xf32, #pr>, %w: tensor<8x16xf32, #pc>) -> (tensor<8x16xf32, #pc>, tensor<8x16xf32, #pr>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32, #pc>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc>
    %y = linalg.matmul ins(%a, %b : tensor<8x12xf32, #pc>, tensor<12x16xf32, #pr>) outs(%z : tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc>
    %late = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%w : tensor<8x16xf32, #pc>) outs(%e : tensor<8x16xf32, #pc>) {
    ^bb0(%x: f32, %o: f32):
      %n = arith.negf %x : f32
      linalg.yield %n : f32
    } -> tensor<8x16xf32, #pc>
    %v = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%w, %y, %late : tensor<8x16xf32, #pc>, tensor<8x16xf32, #pc>, tensor<8x16xf32, #pc>) outs(%e : tensor<8x16xf32, #pc>) {
    ^bb0(%x: f32, %g: f32, %l: f32, %o: f32):
      %r = arith.subf %x, %g : f32
      %t = arith.addf %r, %l : f32
      linalg.yield %t : f32
    } -> tensor<8x16xf32, #pc>
    %e2 = tensor.empty() : tensor<8x16xf32, #pr>
    %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%y : tensor<8x16xf32, #pc>) outs(%e2 : tensor<8x16xf32, #pr>) {
    ^bb0(%g: f32, %o: f32):
      %s = arith.mulf %g, %g : f32
      linalg.yield %s : f32
    } -> tensor<8x16xf32, #pr>
    return %v, %u : tensor<8x16xf32, #pc>, tensor<8x16xf32, #pr>
  }
}

// -----

// A broadcast operand along m (a scale per row, packed along m): its
// channels are the block's rows, the same for every column.

// CHECK-LABEL: func.func @scale_along_m_in_the_gemm(
// CHECK:         %[[R:.+]] = fbl.dispatch @k0_gemm
// CHECK:           %[[T:.+]] = fbl.load_texel %{{.*}} : tensor<8xf32, #fbl.channel_packed<packed = 0>>
// CHECK-NEXT:      vector.extract %[[T]][0]
// CHECK-NEXT:      vector.extract %[[T]][0]
// CHECK-NEXT:      vector.extract %[[T]][0]
// CHECK-NEXT:      vector.extract %[[T]][0]
// CHECK-NEXT:      vector.extract %[[T]][1]
// CHECK-COUNT-16:  arith.mulf
// CHECK-COUNT-4:   fbl.store_texel
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[R]]
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @scale_along_m_in_the_gemm(%a: tensor<8x12xf32, #pc>, %b: tensor<12x16xf32, #pr>, %s: tensor<8xf32, #pr>) -> tensor<8x16xf32, #pr> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32, #pr>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32, #pr>) -> tensor<8x16xf32, #pr>
    %y = linalg.matmul ins(%a, %b : tensor<8x12xf32, #pc>, tensor<12x16xf32, #pr>) outs(%z : tensor<8x16xf32, #pr>) -> tensor<8x16xf32, #pr>
    %u = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (i)>, #id], iterator_types = ["parallel", "parallel"]}
        ins(%y, %s : tensor<8x16xf32, #pr>, tensor<8xf32, #pr>) outs(%e : tensor<8x16xf32, #pr>) {
    ^bb0(%x: f32, %c: f32, %o: f32):
      %r = arith.mulf %x, %c : f32
      linalg.yield %r : f32
    } -> tensor<8x16xf32, #pr>
    return %u : tensor<8x16xf32, #pr>
  }
}
