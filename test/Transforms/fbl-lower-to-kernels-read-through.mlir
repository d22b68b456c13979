// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels | FileCheck %s

// im2col of a 1-D convolution (3 taps, padding 1): the input padded by an
// insert into zeros, one slice per tap, the slices concatenated. The concat's
// kernel reads the input through the slices and the padding: one kernel, no
// fill, no slice kernels. Each tap's element is the input's where the padded
// index falls inside it, zero elsewhere.

// CHECK-LABEL: func.func @im2col(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<8x4xf32
// CHECK-NOT:     fbl.dispatch
// CHECK:         %[[K:.+]] = fbl.dispatch @k0_slice ins(%[[X]] : {{.*}}) outs(
// CHECK-NEXT:    ^bb0(%[[KX:arg[0-9]+]]: {{.*}}, %{{arg[0-9]+}}: {{.*}}):
// CHECK:             scf.if %{{.+}} -> (f32) {
// CHECK:               scf.if %{{.+}} -> (f32) {
// CHECK:                 fbl.load_texel %[[KX]][
// CHECK:               } else {
// CHECK-NEXT:            arith.constant 0.000000e+00 : f32
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[K]]

#pc = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @im2col(%x: tensor<8x4xf32, #pc>) -> tensor<8x12xf32, #pc> {
    %zero = arith.constant 0.0 : f32
    %pe = tensor.empty() : tensor<10x4xf32, #pc>
    %pz = linalg.fill ins(%zero : f32) outs(%pe : tensor<10x4xf32, #pc>) -> tensor<10x4xf32, #pc>
    %p = tensor.insert_slice %x into %pz[1, 0] [8, 4] [1, 1] : tensor<8x4xf32, #pc> into tensor<10x4xf32, #pc>
    %t0 = tensor.extract_slice %p[0, 0] [8, 4] [1, 1] : tensor<10x4xf32, #pc> to tensor<8x4xf32, #pc>
    %t1 = tensor.extract_slice %p[1, 0] [8, 4] [1, 1] : tensor<10x4xf32, #pc> to tensor<8x4xf32, #pc>
    %t2 = tensor.extract_slice %p[2, 0] [8, 4] [1, 1] : tensor<10x4xf32, #pc> to tensor<8x4xf32, #pc>
    %e = tensor.empty() : tensor<8x12xf32, #pc>
    %c0 = tensor.insert_slice %t0 into %e[0, 0] [8, 4] [1, 1] : tensor<8x4xf32, #pc> into tensor<8x12xf32, #pc>
    %c1 = tensor.insert_slice %t1 into %c0[0, 4] [8, 4] [1, 1] : tensor<8x4xf32, #pc> into tensor<8x12xf32, #pc>
    %c2 = tensor.insert_slice %t2 into %c1[0, 8] [8, 4] [1, 1] : tensor<8x4xf32, #pc> into tensor<8x12xf32, #pc>
    return %c2 : tensor<8x12xf32, #pc>
  }
}

// -----

// Views between a slice and the insert reading it are read through too: the
// transpose's result index (i, j) is the slice's (j, i), which is the
// source's (j, i + 4) (offset 4 along dim 1).

// CHECK-LABEL: func.func @slice_view_insert(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<64x40xf32
// CHECK-NOT:     fbl.dispatch
// CHECK:         %[[K:.+]] = fbl.dispatch @k0_slice ins(%[[X]] : {{.*}}) outs(
// CHECK-NEXT:    ^bb0(%[[KX:arg[0-9]+]]: {{.*}}, %{{arg[0-9]+}}: {{.*}}):
// CHECK:             fbl.load_texel %[[KX]][
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[K]]

#rt = #fbl.rtile<tile = [4, 4], packed = 1>
#rtt = #fbl.rtile<tile = [4, 4], packed = 0, intra = rows_on_x, inter = col_major>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @slice_view_insert(%x: tensor<64x40xf32, #rt>) -> tensor<32x128xf32, #rtt> {
    %s = tensor.extract_slice %x[0, 4] [64, 32] [1, 1] : tensor<64x40xf32, #rt> to tensor<64x32xf32, #rt>
    %t = fbl.transpose_view %s, [1, 0] : tensor<64x32xf32, #rt> -> tensor<32x64xf32, #rtt>
    %e = tensor.empty() : tensor<32x128xf32, #rtt>
    %c0 = tensor.insert_slice %t into %e[0, 0] [32, 64] [1, 1] : tensor<32x64xf32, #rtt> into tensor<32x128xf32, #rtt>
    %c1 = tensor.insert_slice %t into %c0[0, 64] [32, 64] [1, 1] : tensor<32x64xf32, #rtt> into tensor<32x128xf32, #rtt>
    return %c1 : tensor<32x128xf32, #rtt>
  }
}

// -----

// A slice that another op reads as a whole (here an elementwise op) keeps
// its kernel; the concat reads that kernel's result. The padding, read only
// by slices, is still read through.

// CHECK-LABEL: func.func @slice_also_read(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<8x4xf32
// CHECK:         %[[S:.+]] = fbl.dispatch @k0_slice ins(%[[X]] : {{.*}})
// CHECK:         %[[G:.+]] = fbl.dispatch @k1_generic ins(%[[S]] : {{.*}})
// CHECK:         %[[C:.+]] = fbl.dispatch @k2_slice ins(%[[S]], %[[X]] : {{.*}})
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[C]], %[[G]]

#pc = #fbl.channel_packed<packed = 1>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @slice_also_read(%x: tensor<8x4xf32, #pc>) -> (tensor<8x8xf32, #pc>, tensor<8x4xf32, #pc>) {
    %zero = arith.constant 0.0 : f32
    %pe = tensor.empty() : tensor<10x4xf32, #pc>
    %pz = linalg.fill ins(%zero : f32) outs(%pe : tensor<10x4xf32, #pc>) -> tensor<10x4xf32, #pc>
    %p = tensor.insert_slice %x into %pz[1, 0] [8, 4] [1, 1] : tensor<8x4xf32, #pc> into tensor<10x4xf32, #pc>
    %t0 = tensor.extract_slice %p[0, 0] [8, 4] [1, 1] : tensor<10x4xf32, #pc> to tensor<8x4xf32, #pc>
    %t1 = tensor.extract_slice %p[2, 0] [8, 4] [1, 1] : tensor<10x4xf32, #pc> to tensor<8x4xf32, #pc>
    %ge = tensor.empty() : tensor<8x4xf32, #pc>
    %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%t0 : tensor<8x4xf32, #pc>) outs(%ge : tensor<8x4xf32, #pc>) {
    ^bb0(%v: f32, %o: f32):
      %m = arith.mulf %v, %v : f32
      linalg.yield %m : f32
    } -> tensor<8x4xf32, #pc>
    %e = tensor.empty() : tensor<8x8xf32, #pc>
    %c0 = tensor.insert_slice %t0 into %e[0, 0] [8, 4] [1, 1] : tensor<8x4xf32, #pc> into tensor<8x8xf32, #pc>
    %c1 = tensor.insert_slice %t1 into %c0[0, 4] [8, 4] [1, 1] : tensor<8x4xf32, #pc> into tensor<8x8xf32, #pc>
    return %c1, %g : tensor<8x8xf32, #pc>, tensor<8x4xf32, #pc>
  }
}

// -----

// col2im: the gradient of the concat, sliced per tap, inserted into zeros
// at each tap's offset and summed. The sum's kernel reads the gradient
// through the slices: one kernel.

// CHECK-LABEL: func.func @col2im(
// CHECK-SAME:    %[[D:[^:]+]]: tensor<8x8xf32
// CHECK-NOT:     fbl.dispatch
// CHECK:         %[[K:.+]] = fbl.dispatch @k0_insert_sum ins(%[[D]] : {{.*}}) outs(
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[K]]

#pc = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @col2im(%d: tensor<8x8xf32, #pc>) -> tensor<10x4xf32, #pc> {
    %zero = arith.constant 0.0 : f32
    %t0 = tensor.extract_slice %d[0, 0] [8, 4] [1, 1] : tensor<8x8xf32, #pc> to tensor<8x4xf32, #pc>
    %t1 = tensor.extract_slice %d[0, 4] [8, 4] [1, 1] : tensor<8x8xf32, #pc> to tensor<8x4xf32, #pc>
    %e = tensor.empty() : tensor<10x4xf32, #pc>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<10x4xf32, #pc>) -> tensor<10x4xf32, #pc>
    %i0 = tensor.insert_slice %t0 into %z[0, 0] [8, 4] [1, 1] : tensor<8x4xf32, #pc> into tensor<10x4xf32, #pc>
    %i1 = tensor.insert_slice %t1 into %z[2, 0] [8, 4] [1, 1] : tensor<8x4xf32, #pc> into tensor<10x4xf32, #pc>
    %s = linalg.add ins(%i0, %i1 : tensor<10x4xf32, #pc>, tensor<10x4xf32, #pc>) outs(%e : tensor<10x4xf32, #pc>) -> tensor<10x4xf32, #pc>
    return %s : tensor<10x4xf32, #pc>
  }
}

// -----

// Padding into a zero constant, read only through: the constant gets no
// kernel either.

// CHECK-LABEL: func.func @pad_constant(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<8x4xf32
// CHECK-NOT:     fbl.dispatch
// CHECK:         %[[K:.+]] = fbl.dispatch @k0_slice ins(%[[X]] : {{.*}})
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[K]]

#pc = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @pad_constant(%x: tensor<8x4xf32, #pc>) -> tensor<8x8xf32, #pc> {
    %pz = arith.constant dense<0.0> : tensor<10x4xf32, #pc>
    %p = tensor.insert_slice %x into %pz[1, 0] [8, 4] [1, 1] : tensor<8x4xf32, #pc> into tensor<10x4xf32, #pc>
    %t0 = tensor.extract_slice %p[0, 0] [8, 4] [1, 1] : tensor<10x4xf32, #pc> to tensor<8x4xf32, #pc>
    %t1 = tensor.extract_slice %p[2, 0] [8, 4] [1, 1] : tensor<10x4xf32, #pc> to tensor<8x4xf32, #pc>
    %e = tensor.empty() : tensor<8x8xf32, #pc>
    %c0 = tensor.insert_slice %t0 into %e[0, 0] [8, 4] [1, 1] : tensor<8x4xf32, #pc> into tensor<8x8xf32, #pc>
    %c1 = tensor.insert_slice %t1 into %c0[0, 4] [8, 4] [1, 1] : tensor<8x4xf32, #pc> into tensor<8x8xf32, #pc>
    return %c1 : tensor<8x8xf32, #pc>
  }
}
