// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels | FileCheck %s

// Register-tiled GEMM: one work-item per 4x4 block of C (16 / 4 n blocks
// along x, 8 / 4 m blocks along y), padded work-items skipped, C's init read
// as 4 texels, k walked 4 at a time with A and B read as 4 texels each, and
// the 16 accumulators stored as 4 texels.

// CHECK-LABEL: func.func @gemm(
// CHECK-SAME:    %[[A:[^:]+]]: tensor<8x12xf32, #fbl.channel_packed<packed = 1>>
// CHECK-SAME:    %[[B:[^:]+]]: tensor<12x16xf32, #fbl.channel_packed<packed = 0>>
// CHECK-SAME:    %[[C:[^:]+]]: tensor<8x16xf32, #fbl.channel_packed<packed = 1>>
// CHECK:         %[[OUT:.+]] = tensor.empty() : tensor<8x16xf32, #fbl.channel_packed<packed = 1>>
// The cost model's estimate of the kernel: 8 work-items each read 3 k-steps
// x (4 texels of A + 4 of B) and C's 4 texels, and write 4.
// CHECK:         %[[R:.+]] = fbl.dispatch @k0_gemm ins(%[[A]], %[[B]], %[[C]] : {{.*}}) outs(%[[OUT]] : {{.*}}) grid [4, 2, 1] workgroup [4, 2, 1] attributes {fbl.estimate = {fetches = 224 : i64, misses = {{[0-9]+}} : i64, time_ns = {{.*}} : f64, writes = 32 : i64}} {
// CHECK-NEXT:    ^bb0(%[[KA:arg[0-9]+]]: {{.*}}, %[[KB:arg[0-9]+]]: {{.*}}, %[[KC:arg[0-9]+]]: {{.*}}, %[[KOUT:arg[0-9]+]]: {{.*}}):
// CHECK-NEXT:      %[[X:.+]] = fbl.work_item_id 0
// CHECK-NEXT:      %[[Y:.+]] = fbl.work_item_id 1
// CHECK-NEXT:      fbl.work_item_id 2
// CHECK-NEXT:      %[[MBLOCKS:.+]] = arith.constant 2 : index
// CHECK-NEXT:      %[[INM:.+]] = arith.cmpi ult, %[[Y]], %[[MBLOCKS]] : index
// CHECK-NEXT:      %[[NBLOCKS:.+]] = arith.constant 4 : index
// CHECK-NEXT:      %[[INN:.+]] = arith.cmpi ult, %[[X]], %[[NBLOCKS]] : index
// CHECK-NEXT:      %[[IN:.+]] = arith.andi %[[INN]], %[[INM]] : i1
// CHECK-NEXT:      scf.if %[[IN]] {
// CHECK-COUNT-4:     fbl.load_texel %[[KC]][
// CHECK-NOT:         fbl.load_texel
// CHECK:             %[[STEP:.+]] = arith.constant 4 : index
// CHECK-NEXT:        %[[K:.+]] = arith.constant 12 : index
// CHECK-NEXT:        %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT:        %[[ACC:.+]]:16 = scf.for %{{.+}} = %[[ZERO]] to %[[K]] step %[[STEP]] iter_args(
// CHECK-COUNT-4:       fbl.load_texel %[[KA]][
// CHECK-COUNT-4:       fbl.load_texel %[[KB]][
// CHECK-COUNT-64:      arith.mulf
// CHECK-NOT:           fbl.load_texel
// CHECK:               scf.yield
// CHECK-SAME:            : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
// CHECK-NEXT:        }
// CHECK:             %[[T0:.+]] = vector.from_elements %[[ACC]]#0, %[[ACC]]#1, %[[ACC]]#2, %[[ACC]]#3 : vector<4xf32>
// CHECK-NEXT:        fbl.store_texel %[[T0]], %[[KOUT]][
// CHECK:             %[[T3:.+]] = vector.from_elements %[[ACC]]#12, %[[ACC]]#13, %[[ACC]]#14, %[[ACC]]#15 : vector<4xf32>
// CHECK-NEXT:        fbl.store_texel %[[T3]], %[[KOUT]][
// CHECK-NEXT:      }
// CHECK-NEXT:    } -> tensor<8x16xf32, #fbl.channel_packed<packed = 1>>
// CHECK-NEXT:    return %[[R]]

#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @gemm(%a: tensor<8x12xf32, #pc>, %b: tensor<12x16xf32, #pr>, %c: tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc> {
    %0 = linalg.matmul ins(%a, %b : tensor<8x12xf32, #pc>, tensor<12x16xf32, #pr>) outs(%c : tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc>
    return %0 : tensor<8x16xf32, #pc>
  }
}

// -----

// Local-tiled GEMM (nvidia-h200 has local_tiled_gemm, 64x64x16 divides into
// work-group tiles): 8x8 work-groups, 2x2 blocks per work-item, no guard (the
// grid is exact and everyone reaches the barriers). Each 16-deep step stages
// A and B tiles in local memory (4 texels of each per work-item), then
// multiplies out of them.

// CHECK-LABEL: func.func @gemm_local(
// CHECK-SAME:    %[[A:[^:]+]]: tensor<64x16xf32
// CHECK-SAME:    %[[B:[^:]+]]: tensor<16x64xf32
// CHECK-SAME:    %[[C:[^:]+]]: tensor<64x64xf32
// CHECK:         fbl.dispatch @k0_gemm_local ins(%[[A]], %[[B]], %[[C]] : {{.*}}) grid [8, 8, 1] workgroup [8, 8, 1] attributes {fbl.estimate = {{.*}}} {
// CHECK-NEXT:    ^bb0(%[[KA:arg[0-9]+]]: {{.*}}, %[[KB:arg[0-9]+]]: {{.*}}, %[[KC:arg[0-9]+]]: {{.*}}, %[[KOUT:arg[0-9]+]]: {{.*}}):
// CHECK-NEXT:      %[[ATILE:.+]] = memref.alloca() : memref<4x4x16xvector<4xf32>, 3>
// CHECK-NEXT:      %[[BTILE:.+]] = memref.alloca() : memref<4x4x16xvector<4xf32>, 3>
// CHECK-NEXT:      fbl.work_item_id 0
// CHECK-NEXT:      fbl.work_item_id 1
// CHECK-NEXT:      fbl.work_item_id 2
// CHECK:           fbl.local_id 0
// CHECK-NEXT:      fbl.local_id 1
// CHECK-NEXT:      fbl.group_id 0
// CHECK-NEXT:      fbl.group_id 1
// CHECK-NOT:       scf.if
// CHECK-COUNT-16:  fbl.load_texel %[[KC]][
// CHECK:           %[[STEP:.+]] = arith.constant 16 : index
// CHECK-NEXT:      %[[K:.+]] = arith.constant 16 : index
// CHECK-NEXT:      %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT:      %[[ACC:.+]]:64 = scf.for %{{.+}} = %[[ZERO]] to %[[K]] step %[[STEP]] iter_args(
// CHECK-COUNT-4:     fbl.load_texel %[[KA]][
// CHECK-NEXT:        memref.store %{{.+}}, %[[ATILE]][
// CHECK:             fbl.load_texel %[[KB]][
// CHECK-NEXT:        memref.store %{{.+}}, %[[BTILE]][
// CHECK-NOT:         fbl.load_texel
// CHECK:             fbl.barrier
// CHECK-COUNT-4:     memref.load %[[ATILE]][
// CHECK-COUNT-4:     memref.load %[[BTILE]][
// CHECK-NOT:         fbl.load_texel
// CHECK:             fbl.barrier
// CHECK-NEXT:        scf.yield
// CHECK-NEXT:      }
// CHECK-COUNT-16:  fbl.store_texel %{{.+}}, %[[KOUT]][
// CHECK-NEXT:    } -> tensor<64x64xf32, #fbl.channel_packed<packed = 1>>

#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
  func.func @gemm_local(%a: tensor<64x16xf32, #pc>, %b: tensor<16x64xf32, #pr>, %c: tensor<64x64xf32, #pc>) -> tensor<64x64xf32, #pc> {
    %0 = linalg.matmul ins(%a, %b : tensor<64x16xf32, #pc>, tensor<16x64xf32, #pr>) outs(%c : tensor<64x64xf32, #pc>) -> tensor<64x64xf32, #pc>
    return %0 : tensor<64x64xf32, #pc>
  }
}

// -----

// Elementwise: one work-item per output texel (8 / 4 x 4 texels), each of
// its 4 channels mapped back to an element (or padding, zero), the inputs
// loaded through their layouts and the body inlined.

// CHECK-LABEL: func.func @bias_tanh(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<4x8xf32
// CHECK-SAME:    %[[B:[^:]+]]: tensor<8xf32
// CHECK:         fbl.dispatch @k0_generic ins(%[[X]], %[[B]] : {{.*}}) grid [2, 4, 1] workgroup [2, 4, 1] attributes {fbl.estimate = {{.*}}} {
// CHECK-NEXT:    ^bb0(%[[KX:arg[0-9]+]]: {{.*}}, %[[KB:arg[0-9]+]]: {{.*}}, %[[KOUT:arg[0-9]+]]: {{.*}}):
// CHECK-NEXT:      %[[TX:.+]] = fbl.work_item_id 0
// CHECK-NEXT:      %[[TY:.+]] = fbl.work_item_id 1
// CHECK-NEXT:      %[[TL:.+]] = fbl.work_item_id 2
// CHECK:           scf.if
// CHECK:             %[[CH0:.+]] = scf.if %{{.+}} -> (f32) {
// CHECK:               %[[XT:.+]] = fbl.load_texel %[[KX]][
// CHECK-NEXT:          %[[XV:.+]] = vector.extract %[[XT]][%{{.+}}] : f32 from vector<4xf32>
// CHECK:               %[[BT:.+]] = fbl.load_texel %[[KB]][
// CHECK-NEXT:          %[[BV:.+]] = vector.extract %[[BT]][%{{.+}}] : f32 from vector<4xf32>
// CHECK-NEXT:          %[[S:.+]] = arith.addf %[[XV]], %[[BV]] : f32
// CHECK-NEXT:          %[[T:.+]] = math.tanh %[[S]] : f32
// CHECK-NEXT:          scf.yield %[[T]] : f32
// CHECK-NEXT:        } else {
// CHECK-NEXT:          %[[PAD:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:          scf.yield %[[PAD]] : f32
// CHECK-NEXT:        }
// CHECK:             %[[CH1:.+]] = scf.if %{{.+}} -> (f32) {
// CHECK:             %[[CH2:.+]] = scf.if %{{.+}} -> (f32) {
// CHECK:             %[[CH3:.+]] = scf.if %{{.+}} -> (f32) {
// CHECK:             %[[TEXEL:.+]] = vector.from_elements %[[CH0]], %[[CH1]], %[[CH2]], %[[CH3]] : vector<4xf32>
// CHECK-NEXT:        fbl.store_texel %[[TEXEL]], %[[KOUT]][%[[TL]], %[[TY]], %[[TX]]]

#pc = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @bias_tanh(%x: tensor<4x8xf32, #pc>, %b: tensor<8xf32, #fbl.channel_packed<packed = 0>>) -> tensor<4x8xf32, #pc> {
    %e = tensor.empty() : tensor<4x8xf32, #pc>
    %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%x, %b : tensor<4x8xf32, #pc>, tensor<8xf32, #fbl.channel_packed<packed = 0>>) outs(%e : tensor<4x8xf32, #pc>) {
    ^bb0(%v: f32, %w: f32, %o: f32):
      %s = arith.addf %v, %w : f32
      %t = math.tanh %s : f32
      linalg.yield %t : f32
    } -> tensor<4x8xf32, #pc>
    return %0 : tensor<4x8xf32, #pc>
  }
}

// -----

// Reduction: one work-item per output texel, the reduced dim walked by a
// loop inside each channel, starting from the init.

// CHECK-LABEL: func.func @row_sum(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<4x8xf32
// CHECK-SAME:    %[[INIT:[^:]+]]: tensor<4xf32
// CHECK:         fbl.dispatch @k0_generic ins(%[[X]], %[[INIT]] : {{.*}}) grid [1, 1, 1] workgroup [1, 1, 1] attributes {fbl.estimate = {{.*}}} {
// CHECK-NEXT:    ^bb0(%[[KX:arg[0-9]+]]: {{.*}}, %[[KINIT:arg[0-9]+]]: {{.*}}, %[[KOUT:arg[0-9]+]]: {{.*}}):
// CHECK:             %[[CH0:.+]] = scf.if %{{.+}} -> (f32) {
// CHECK:               %[[IT:.+]] = fbl.load_texel %[[KINIT]][
// CHECK-NEXT:          %[[IV:.+]] = vector.extract %[[IT]][%{{.+}}] : f32 from vector<4xf32>
// CHECK:               %[[N:.+]] = arith.constant 8 : index
// CHECK:               %[[SUM:.+]] = scf.for %{{.+}} = %{{.+}} to %[[N]] step %{{.+}} iter_args(%[[ACC:.+]] = %[[IV]]) -> (f32) {
// CHECK:                 %[[XT:.+]] = fbl.load_texel %[[KX]][
// CHECK-NEXT:            %[[XV:.+]] = vector.extract %[[XT]][%{{.+}}] : f32 from vector<4xf32>
// CHECK-NEXT:            %[[NEXT:.+]] = arith.addf %[[ACC]], %[[XV]] : f32
// CHECK-NEXT:            scf.yield %[[NEXT]] : f32
// CHECK-NEXT:          }
// CHECK-NEXT:          scf.yield %[[SUM]] : f32
// CHECK-COUNT-3:     scf.for
// CHECK:             vector.from_elements
// CHECK-NEXT:        fbl.store_texel %{{.+}}, %[[KOUT]][

#pc = #fbl.channel_packed<packed = 1>
#p0 = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @row_sum(%x: tensor<4x8xf32, #pc>, %z: tensor<4xf32, #p0>) -> tensor<4xf32, #p0> {
    %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<4x8xf32, #pc>) outs(%z : tensor<4xf32, #p0>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %acc, %v : f32
      linalg.yield %s : f32
    } -> tensor<4xf32, #p0>
    return %0 : tensor<4xf32, #p0>
  }
}

// -----

// Relayout: the per-texel kernel with a load of the source as its body
// (4x8 packed along rows: 8 texels in one row).

// CHECK-LABEL: func.func @relayout(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<4x8xf32, #fbl.channel_packed<packed = 1>>
// CHECK-NOT:     tensor.empty() : tensor<4x8xf32>
// CHECK:         fbl.dispatch @k0_relayout ins(%[[X]] : {{.*}}) outs(%{{.+}} : tensor<4x8xf32, #fbl.channel_packed<packed = 0>>) grid [8, 1, 1] workgroup [8, 1, 1] attributes {fbl.estimate = {{.*}}} {
// CHECK-NEXT:    ^bb0(%[[KX:arg[0-9]+]]: {{.*}}, %[[KOUT:arg[0-9]+]]: {{.*}}):
// CHECK-COUNT-4:     fbl.load_texel %[[KX]][
// CHECK:             vector.from_elements
// CHECK-NEXT:        fbl.store_texel %{{.+}}, %[[KOUT]][

module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @relayout(%x: tensor<4x8xf32, #fbl.channel_packed<packed = 1>>) -> tensor<4x8xf32, #fbl.channel_packed<packed = 0>> {
    // Loads the tensor dialect, which the pass creates ops of (tensor.empty)
    // without declaring it.
    %unused = tensor.empty() : tensor<4x8xf32>
    %0 = fbl.relayout %x : tensor<4x8xf32, #fbl.channel_packed<packed = 1>> to tensor<4x8xf32, #fbl.channel_packed<packed = 0>>
    return %0 : tensor<4x8xf32, #fbl.channel_packed<packed = 0>>
  }
}

// -----

// extract_slice: a copy kernel reading the source at index * stride + offset.

// CHECK-LABEL: func.func @slice(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<8x12xf32
// CHECK:         fbl.dispatch @k0_slice ins(%[[X]] : {{.*}}) outs(%{{.+}} : tensor<4x8xf32, {{.*}}) grid [2, 4, 1] workgroup [2, 4, 1] attributes {fbl.estimate = {{.*}}} {
// CHECK-NEXT:    ^bb0(%[[KX:arg[0-9]+]]: {{.*}}, %[[KOUT:arg[0-9]+]]: {{.*}}):
// CHECK:             scf.if %{{.+}} -> (f32) {
// CHECK-NEXT:          %[[OFF0:.+]] = arith.constant 2 : index
// CHECK-NEXT:          %[[I:.+]] = arith.addi %{{.+}}, %[[OFF0]] : index
// CHECK-NEXT:          %[[OFF1:.+]] = arith.constant 4 : index
// CHECK-NEXT:          %[[J:.+]] = arith.addi %{{.+}}, %[[OFF1]] : index
// CHECK:               fbl.load_texel %[[KX]][
// CHECK-COUNT-3:     fbl.load_texel %[[KX]][
// CHECK:             fbl.store_texel %{{.+}}, %[[KOUT]][

#pc = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @slice(%x: tensor<8x12xf32, #pc>) -> tensor<4x8xf32, #pc> {
    %0 = tensor.extract_slice %x[2, 4] [4, 8] [1, 1] : tensor<8x12xf32, #pc> to tensor<4x8xf32, #pc>
    return %0 : tensor<4x8xf32, #pc>
  }
}

// -----

// insert_slice: each element comes from the source inside the inserted
// region, from the destination elsewhere.

// CHECK-LABEL: func.func @insert_slice(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<4x8xf32
// CHECK-SAME:    %[[D:[^:]+]]: tensor<8x12xf32
// CHECK:         fbl.dispatch @k0_slice ins(%[[X]], %[[D]] : {{.*}}) grid [4, 8, 1] workgroup [4, 8, 1] attributes {fbl.estimate = {{.*}}} {
// CHECK-NEXT:    ^bb0(%[[KX:arg[0-9]+]]: {{.*}}, %[[KD:arg[0-9]+]]: {{.*}}, %[[KOUT:arg[0-9]+]]: {{.*}}):
// CHECK:             arith.cmpi sge
// CHECK:             arith.cmpi slt
// CHECK:             scf.if %{{.+}} -> (f32) {
// CHECK:               fbl.load_texel %[[KX]][
// CHECK:             } else {
// CHECK:               fbl.load_texel %[[KD]][
// CHECK:             fbl.store_texel %{{.+}}, %[[KOUT]][

#pc = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @insert_slice(%x: tensor<4x8xf32, #pc>, %d: tensor<8x12xf32, #pc>) -> tensor<8x12xf32, #pc> {
    %0 = tensor.insert_slice %x into %d[2, 4] [4, 8] [1, 1] : tensor<4x8xf32, #pc> into tensor<8x12xf32, #pc>
    return %0 : tensor<8x12xf32, #pc>
  }
}

// -----

// Scatter loop: the column loop indexes every access of the buffer, so its
// 4 iterations are the work-items; each copies its column of the initial
// buffer, then runs the row loop in place.

// CHECK-LABEL: func.func @scatter_add(
// CHECK-SAME:    %[[G:[^:]+]]: tensor<5x4xf32
// CHECK-SAME:    %[[IDS:[^:]+]]: tensor<5xi64, #fbl.buffer>
// CHECK-SAME:    %[[INIT:[^:]+]]: tensor<6x4xf32, #fbl.buffer>
// CHECK:         fbl.dispatch @k0_scatter ins(%[[INIT]], %[[IDS]], %[[G]] : {{.*}}) outs(%{{.+}} : tensor<6x4xf32, #fbl.buffer>) grid [4, 1, 1] workgroup [4, 1, 1] attributes {fbl.estimate = {{.*}}} {
// CHECK-NEXT:    ^bb0(%[[KINIT:arg[0-9]+]]: {{.*}}, %[[KIDS:arg[0-9]+]]: {{.*}}, %[[KG:arg[0-9]+]]: {{.*}}, %[[KOUT:arg[0-9]+]]: {{.*}}):
// CHECK-NEXT:      %[[COL:.+]] = fbl.work_item_id 0
// CHECK-NEXT:      %[[NCOLS:.+]] = arith.constant 4 : index
// CHECK-NEXT:      %[[IN:.+]] = arith.cmpi ult, %[[COL]], %[[NCOLS]] : index
// CHECK-NEXT:      scf.if %[[IN]] {
// CHECK:             %[[ROWS:.+]] = arith.constant 6 : index
// CHECK:             scf.for %{{.+}} = %{{.+}} to %[[ROWS]] step %{{.+}} {
// CHECK:               %[[V:.+]] = fbl.load_element %[[KINIT]][%{{.+}}] : tensor<6x4xf32, #fbl.buffer> -> f32
// CHECK-NEXT:          fbl.store_element %[[V]], %[[KOUT]][%{{.+}}]
// CHECK-NEXT:        }
// CHECK:             scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK:               %[[ID:.+]] = fbl.load_element %[[KIDS]][%{{.+}}] : tensor<5xi64, #fbl.buffer> -> i64
// CHECK-NEXT:          %[[ROW:.+]] = arith.index_cast %[[ID]] : i64 to index
// CHECK:               fbl.load_texel %[[KG]][
// CHECK:               %[[OLD:.+]] = fbl.load_element %[[KOUT]][%{{.+}}]
// CHECK-NEXT:          %[[NEW:.+]] = arith.addf %[[OLD]], %{{.+}} : f32
// CHECK:               fbl.store_element %[[NEW]], %[[KOUT]][%{{.+}}]
// CHECK-NEXT:        }
// CHECK-NEXT:      }

#pc = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @scatter_add(%g: tensor<5x4xf32, #pc>, %ids: tensor<5xi64, #fbl.buffer>, %init: tensor<6x4xf32, #fbl.buffer>) -> tensor<6x4xf32, #fbl.buffer> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %0 = scf.for %i = %c0 to %c5 step %c1 iter_args(%t = %init) -> (tensor<6x4xf32, #fbl.buffer>) {
      %1 = scf.for %j = %c0 to %c4 step %c1 iter_args(%u = %t) -> (tensor<6x4xf32, #fbl.buffer>) {
        %id = tensor.extract %ids[%i] : tensor<5xi64, #fbl.buffer>
        %row = arith.index_cast %id : i64 to index
        %v = tensor.extract %g[%i, %j] : tensor<5x4xf32, #pc>
        %old = tensor.extract %u[%row, %j] : tensor<6x4xf32, #fbl.buffer>
        %s = arith.addf %old, %v : f32
        %ins = tensor.insert %s into %u[%row, %j] : tensor<6x4xf32, #fbl.buffer>
        scf.yield %ins : tensor<6x4xf32, #fbl.buffer>
      }
      scf.yield %1 : tensor<6x4xf32, #fbl.buffer>
    }
    return %0 : tensor<6x4xf32, #fbl.buffer>
  }
}
