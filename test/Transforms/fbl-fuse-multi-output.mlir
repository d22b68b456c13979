// RUN: fbl-opt %s -split-input-file -fbl-fuse-multi-output | FileCheck %s
// RUN: fbl-opt %s -split-input-file -fbl-fuse-multi-output -fbl-lower-to-kernels | FileCheck %s --check-prefix=KERNEL
// RUN: fbl-opt %s -split-input-file -fbl-fuse-multi-output=gemm-epilogues=same-shape | FileCheck %s --check-prefix=SAME

// AdamW's update of one parameter: the moments m' and v' are results of the
// step and inputs of the parameter's update. Both producers fuse into the
// update, which keeps them as outputs: one op, three results.
// CHECK-LABEL: func.func @adamw_update(
// CHECK-SAME:    %[[P:[^:]+]]: tensor<8x12xf32, #{{.*}}>, %[[G:[^:]+]]: tensor<8x12xf32, #{{.*}}>, %[[M:[^:]+]]: tensor<8x12xf32, #{{.*}}>, %[[V:[^:]+]]: tensor<8x12xf32, #{{.*}}>)
// CHECK:         %[[F:.+]]:3 = linalg.generic
// CHECK-SAME:      ins(%[[P]], %[[M]], %[[G]], %[[V]] :
// CHECK:           math.sqrt
// CHECK:           linalg.yield
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[F]]#2, %[[F]]#1, %[[F]]#0
// One kernel writes all three, each texel to every output at one place.
// KERNEL-LABEL: func.func @adamw_update(
// KERNEL:         %[[K:.+]]:3 = fbl.dispatch @k0_generic ins({{.*}}) outs(%{{.*}}, %{{.*}}, %{{.*}} :
// KERNEL-COUNT-3:   fbl.store_texel
// KERNEL:         return %[[K]]#2, %[[K]]#1, %[[K]]#0
// KERNEL-NOT:     fbl.dispatch
#l = #fbl.channel_packed<packed = 1>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @adamw_update(%p: tensor<8x12xf32, #l>, %g: tensor<8x12xf32, #l>, %m: tensor<8x12xf32, #l>, %v: tensor<8x12xf32, #l>) -> (tensor<8x12xf32, #l>, tensor<8x12xf32, #l>, tensor<8x12xf32, #l>) {
    %b1 = arith.constant 0.9 : f32
    %b2 = arith.constant 0.999 : f32
    %lr = arith.constant 0.001 : f32
    %e = tensor.empty() : tensor<8x12xf32, #l>
    %m1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%m, %g : tensor<8x12xf32, #l>, tensor<8x12xf32, #l>) outs(%e : tensor<8x12xf32, #l>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %x = arith.mulf %a, %b1 : f32
      %y = arith.addf %x, %b : f32
      linalg.yield %y : f32
    } -> tensor<8x12xf32, #l>
    %v1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%v, %g : tensor<8x12xf32, #l>, tensor<8x12xf32, #l>) outs(%e : tensor<8x12xf32, #l>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %x = arith.mulf %a, %b2 : f32
      %s = arith.mulf %b, %b : f32
      %y = arith.addf %x, %s : f32
      linalg.yield %y : f32
    } -> tensor<8x12xf32, #l>
    %p1 = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%p, %m1, %v1 : tensor<8x12xf32, #l>, tensor<8x12xf32, #l>, tensor<8x12xf32, #l>) outs(%e : tensor<8x12xf32, #l>) {
    ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
      %r = math.sqrt %c : f32
      %q = arith.divf %b, %r : f32
      %d = arith.mulf %q, %lr : f32
      %y = arith.subf %a, %d : f32
      linalg.yield %y : f32
    } -> tensor<8x12xf32, #l>
    return %p1, %m1, %v1 : tensor<8x12xf32, #l>, tensor<8x12xf32, #l>, tensor<8x12xf32, #l>
  }
}

// -----

// The same update where the target lets a kernel write two images: the
// first moment fuses into the update (two outputs), the second does not
// (it would make three).
// CHECK-LABEL: func.func @adamw_write_limit(
// CHECK:         linalg.generic
// CHECK:         %[[F:.+]]:2 = linalg.generic
// CHECK-NOT:     linalg.generic
// CHECK:         return
// KERNEL-LABEL: func.func @adamw_write_limit(
// KERNEL:         fbl.dispatch @k0_generic {{.*}} outs(%{{[^,]*}} :
// KERNEL:         fbl.dispatch @k1_generic {{.*}} outs(%{{.*}}, %{{.*}} :
#l = #fbl.channel_packed<packed = 1>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu", max_write_image_args = 2>} {
  func.func @adamw_write_limit(%p: tensor<8x12xf32, #l>, %g: tensor<8x12xf32, #l>, %m: tensor<8x12xf32, #l>, %v: tensor<8x12xf32, #l>) -> (tensor<8x12xf32, #l>, tensor<8x12xf32, #l>, tensor<8x12xf32, #l>) {
    %b1 = arith.constant 0.9 : f32
    %b2 = arith.constant 0.999 : f32
    %lr = arith.constant 0.001 : f32
    %e = tensor.empty() : tensor<8x12xf32, #l>
    %m1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%m, %g : tensor<8x12xf32, #l>, tensor<8x12xf32, #l>) outs(%e : tensor<8x12xf32, #l>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %x = arith.mulf %a, %b1 : f32
      %y = arith.addf %x, %b : f32
      linalg.yield %y : f32
    } -> tensor<8x12xf32, #l>
    %v1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%v, %g : tensor<8x12xf32, #l>, tensor<8x12xf32, #l>) outs(%e : tensor<8x12xf32, #l>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %x = arith.mulf %a, %b2 : f32
      %s = arith.mulf %b, %b : f32
      %y = arith.addf %x, %s : f32
      linalg.yield %y : f32
    } -> tensor<8x12xf32, #l>
    %p1 = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%p, %m1, %v1 : tensor<8x12xf32, #l>, tensor<8x12xf32, #l>, tensor<8x12xf32, #l>) outs(%e : tensor<8x12xf32, #l>) {
    ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
      %r = math.sqrt %c : f32
      %q = arith.divf %b, %r : f32
      %d = arith.mulf %q, %lr : f32
      %y = arith.subf %a, %d : f32
      linalg.yield %y : f32
    } -> tensor<8x12xf32, #l>
    return %p1, %m1, %v1 : tensor<8x12xf32, #l>, tensor<8x12xf32, #l>, tensor<8x12xf32, #l>
  }
}


// -----

// Not fused: the producer's result has another layout than the consumer's
// (one kernel writes all outputs at one place); the consumer reads the
// producer transposed; a reader of the producer comes before the consumer;
// the consumer reduces. A single-use chain (%z into %y) fuses as upstream
// fusion does.
// CHECK-LABEL: func.func @not_fused(
// CHECK:         %[[U:.+]] = linalg.generic
// CHECK:           math.exp
// CHECK:         %[[W:.+]] = linalg.generic
// CHECK-SAME:      ins(%[[U]] :
// CHECK:         %[[S:.+]] = linalg.generic
// CHECK-SAME:      ins(%[[U]] :
// CHECK:         %[[SUM:.+]] = linalg.generic
// CHECK-SAME:      ins(%[[S]] :
// CHECK:         %[[Y:.+]] = linalg.generic
// CHECK-SAME:      ins(%[[S]] :
// CHECK:           arith.addf
// CHECK:           arith.negf
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[Y]], %[[W]], %[[S]], %[[SUM]]
// KERNEL-LABEL: func.func @not_fused(
// KERNEL-COUNT-5: fbl.dispatch
#a = #fbl.channel_packed<packed = 1>
#b = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
#t = affine_map<(i, j) -> (j, i)>
#row = affine_map<(i, j) -> (i)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @not_fused(%x: tensor<8x8xf32, #a>) -> (tensor<8x8xf32, #a>, tensor<8x8xf32, #b>, tensor<8x8xf32, #a>, tensor<8xf32, #b>) {
    %ea = tensor.empty() : tensor<8x8xf32, #a>
    %eb = tensor.empty() : tensor<8x8xf32, #b>
    %er = tensor.empty() : tensor<8xf32, #b>
    // Another layout.
    %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<8x8xf32, #a>) outs(%ea : tensor<8x8xf32, #a>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.exp %v : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32, #a>
    %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%u : tensor<8x8xf32, #a>) outs(%eb : tensor<8x8xf32, #b>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.mulf %v, %v : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32, #b>
    // Read transposed.
    %s = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
        ins(%u : tensor<8x8xf32, #a>) outs(%ea : tensor<8x8xf32, #a>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.tanh %v : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32, #a>
    // %s is read by a reduction (not fusable), then by an elementwise op
    // after it: fusing into that one would move %s below its first reader.
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%s : tensor<8x8xf32, #a>) outs(%er : tensor<8xf32, #b>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.addf %v, %o : f32
      linalg.yield %r : f32
    } -> tensor<8xf32, #b>
    %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%s : tensor<8x8xf32, #a>) outs(%ea : tensor<8x8xf32, #a>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.addf %v, %v : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32, #a>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%z : tensor<8x8xf32, #a>) outs(%ea : tensor<8x8xf32, #a>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.negf %v : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32, #a>
    return %y, %w, %s, %sum : tensor<8x8xf32, #a>, tensor<8x8xf32, #b>, tensor<8x8xf32, #a>, tensor<8xf32, #b>
  }
}

// -----

// A consumer reading two results of one producer is not fused with it (the
// fusion goes through one operand; the other result would still come from
// the producer's kernel). Found by the mutation fuzzer: the fused op read
// its own result.
// CHECK-LABEL: func.func @two_results_of_one_producer(
// CHECK:         %[[F:.+]]:2 = linalg.generic
// CHECK:         %[[C:.+]] = linalg.generic
// CHECK-SAME:      ins(%{{.+}}, %[[F]]#{{[01]}}, %[[F]]#{{[01]}} :
// CHECK:         return %[[C]]
#l = #fbl.channel_packed<packed = 0>
#id = affine_map<(i) -> (i)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @two_results_of_one_producer(%m: tensor<3xf32, #l>, %v: tensor<3xf32, #l>, %p: tensor<3xf32, #l>) -> (tensor<3xf32, #l>, tensor<3xf32, #l>, tensor<3xf32, #l>) {
    %one = arith.constant 1.0 : f32
    %e = tensor.empty() : tensor<3xf32, #l>
    %g = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%e : tensor<3xf32, #l>) {
    ^bb0(%o: f32):
      linalg.yield %one : f32
    } -> tensor<3xf32, #l>
    %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%m, %g : tensor<3xf32, #l>, tensor<3xf32, #l>) outs(%e : tensor<3xf32, #l>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %r = arith.addf %x, %y : f32
      linalg.yield %r : f32
    } -> tensor<3xf32, #l>
    %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%v, %g : tensor<3xf32, #l>, tensor<3xf32, #l>) outs(%e : tensor<3xf32, #l>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %r = arith.mulf %x, %y : f32
      linalg.yield %r : f32
    } -> tensor<3xf32, #l>
    %c = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]} ins(%p, %a, %b : tensor<3xf32, #l>, tensor<3xf32, #l>, tensor<3xf32, #l>) outs(%e : tensor<3xf32, #l>) {
    ^bb0(%x: f32, %y: f32, %z: f32, %o: f32):
      %r = arith.addf %x, %y : f32
      %t = arith.mulf %r, %z : f32
      linalg.yield %t : f32
    } -> tensor<3xf32, #l>
    return %c, %a, %b : tensor<3xf32, #l>, tensor<3xf32, #l>, tensor<3xf32, #l>
  }
}

// -----

// A bias add, its GEMM's only reader, is that GEMM's epilogue (a bias is an
// input that drops m): it stays for the GEMM's kernel although the GELU
// after it could take it as a second output. Where GEMM kernels take no
// such inputs (gemm-epilogues=same-shape, as fbl-lower-to-kernels is told
// too) the GELU takes it.
// CHECK-LABEL: func.func @bias_add_left_to_the_gemm(
// CHECK:         %[[C:.+]] = linalg.matmul
// CHECK:         %[[H:.+]] = linalg.generic {{.*}} ins(%[[C]], %{{.*}} :
// CHECK:         %[[G:.+]] = linalg.generic {{.*}} ins(%[[H]] :
// CHECK:         return %[[G]], %[[H]]
// SAME-LABEL:  func.func @bias_add_left_to_the_gemm(
// SAME:          %[[C:.+]] = linalg.matmul
// SAME:          %[[F:.+]]:2 = linalg.generic {{.*}} ins(%[[C]], %{{.*}} :
// SAME:          return %[[F]]#1, %[[F]]#0
#l = #fbl.channel_packed<packed = 1>
#v = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @bias_add_left_to_the_gemm(%x: tensor<8x12xf32, #l>, %w: tensor<12x16xf32, #v>, %b: tensor<16xf32, #v>) -> (tensor<8x16xf32, #l>, tensor<8x16xf32, #l>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32, #l>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32, #l>) -> tensor<8x16xf32, #l>
    %c = linalg.matmul ins(%x, %w : tensor<8x12xf32, #l>, tensor<12x16xf32, #v>) outs(%z : tensor<8x16xf32, #l>) -> tensor<8x16xf32, #l>
    %h = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
        ins(%c, %b : tensor<8x16xf32, #l>, tensor<16xf32, #v>) outs(%e : tensor<8x16xf32, #l>) {
    ^bb0(%a: f32, %bb: f32, %o: f32):
      %r = arith.addf %a, %bb : f32
      linalg.yield %r : f32
    } -> tensor<8x16xf32, #l>
    %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%h : tensor<8x16xf32, #l>) outs(%e : tensor<8x16xf32, #l>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.tanh %a : f32
      linalg.yield %r : f32
    } -> tensor<8x16xf32, #l>
    return %g, %h : tensor<8x16xf32, #l>, tensor<8x16xf32, #l>
  }
}
