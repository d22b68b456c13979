// RUN: rm -rf %t && fbl-translate --fbl-to-opencl %s -o %t
// RUN: FileCheck %s --check-prefix=CL < %t/kernels.cl
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.json
// RUN: fbl-translate --fbl-to-spirv %s -o %t/spv && spirv-val --target-env opencl1.2 %t/spv/kernels.spv

// A kernel's variants print as functions of their own, NAME_v1, NAME_v2,
// after its function, and the manifest lists them as the launch's
// `variants`. Launches share a function where body and variants print
// alike (k1 runs k0's), not where only the body does (k2 has no variants).
// A variant's name is apart from every kernel's: a kernel is already
// called k0_v1, so k0's first variant is k0_v1_.

// CL: __kernel void k0(
// CL-NOT: fabs(
// CL: __kernel void k0_v1_(
// CL: fabs(
// CL: __kernel void k0_v2(
// CL-NOT: fabs(
// CL: __kernel void k2(
// CL: __kernel void k0_v1(
// CL-NOT: __kernel

// MANIFEST: "kernels": [
// MANIFEST: "name": "k0",
// MANIFEST-NEXT: "variants": [
// MANIFEST-NEXT: "k0_v1_",
// MANIFEST-NEXT: "k0_v2"
// MANIFEST-NEXT: ],
// MANIFEST: "name": "k1",
// MANIFEST-NEXT: "function": "k0",
// MANIFEST-NEXT: "variants": [
// MANIFEST-NEXT: "k0_v1_",
// MANIFEST-NEXT: "k0_v2"
// MANIFEST-NEXT: ],
// MANIFEST: "name": "k2",
// MANIFEST-NEXT: "args"
// MANIFEST: "name": "k0_v1",
// MANIFEST-NEXT: "args"

#cp = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @step(%x: tensor<4x8xf32, #cp>)
      -> (tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>) {
    %e0 = tensor.empty() : tensor<4x8xf32, #cp>
    %r0 = fbl.dispatch @k0 ins(%x : tensor<4x8xf32, #cp>) outs(%e0 : tensor<4x8xf32, #cp>) grid [2, 4, 1] workgroup [2, 4, 1] {
    ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
      %i = fbl.work_item_id 0
      %j = fbl.work_item_id 1
      %c0 = arith.constant 0 : index
      %t = fbl.load_texel %a[%c0, %j, %i] : tensor<4x8xf32, #cp>
      fbl.store_texel %t, %o[%c0, %j, %i] : tensor<4x8xf32, #cp>
      fbl.kernel_return
    } variants {
    ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
      %i = fbl.work_item_id 0
      %j = fbl.work_item_id 1
      %c0 = arith.constant 0 : index
      %t = fbl.load_texel %a[%c0, %j, %i] : tensor<4x8xf32, #cp>
      %u = math.absf %t : vector<4xf32>
      fbl.store_texel %u, %o[%c0, %j, %i] : tensor<4x8xf32, #cp>
      fbl.kernel_return
    }, {
    ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
      %i = fbl.work_item_id 0
      %j = fbl.work_item_id 1
      %c0 = arith.constant 0 : index
      %t = fbl.load_texel %a[%c0, %i, %j] : tensor<4x8xf32, #cp>
      fbl.store_texel %t, %o[%c0, %i, %j] : tensor<4x8xf32, #cp>
      fbl.kernel_return
    } -> tensor<4x8xf32, #cp>
    %e1 = tensor.empty() : tensor<4x8xf32, #cp>
    %r1 = fbl.dispatch @k1 ins(%r0 : tensor<4x8xf32, #cp>) outs(%e1 : tensor<4x8xf32, #cp>) grid [2, 4, 1] workgroup [2, 4, 1] {
    ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
      %i = fbl.work_item_id 0
      %j = fbl.work_item_id 1
      %c0 = arith.constant 0 : index
      %t = fbl.load_texel %a[%c0, %j, %i] : tensor<4x8xf32, #cp>
      fbl.store_texel %t, %o[%c0, %j, %i] : tensor<4x8xf32, #cp>
      fbl.kernel_return
    } variants {
    ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
      %i = fbl.work_item_id 0
      %j = fbl.work_item_id 1
      %c0 = arith.constant 0 : index
      %t = fbl.load_texel %a[%c0, %j, %i] : tensor<4x8xf32, #cp>
      %u = math.absf %t : vector<4xf32>
      fbl.store_texel %u, %o[%c0, %j, %i] : tensor<4x8xf32, #cp>
      fbl.kernel_return
    }, {
    ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
      %i = fbl.work_item_id 0
      %j = fbl.work_item_id 1
      %c0 = arith.constant 0 : index
      %t = fbl.load_texel %a[%c0, %i, %j] : tensor<4x8xf32, #cp>
      fbl.store_texel %t, %o[%c0, %i, %j] : tensor<4x8xf32, #cp>
      fbl.kernel_return
    } -> tensor<4x8xf32, #cp>
    %e2 = tensor.empty() : tensor<4x8xf32, #cp>
    %r2 = fbl.dispatch @k2 ins(%r1 : tensor<4x8xf32, #cp>) outs(%e2 : tensor<4x8xf32, #cp>) grid [2, 4, 1] workgroup [2, 4, 1] {
    ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
      %i = fbl.work_item_id 0
      %j = fbl.work_item_id 1
      %c0 = arith.constant 0 : index
      %t = fbl.load_texel %a[%c0, %j, %i] : tensor<4x8xf32, #cp>
      fbl.store_texel %t, %o[%c0, %j, %i] : tensor<4x8xf32, #cp>
      fbl.kernel_return
    } -> tensor<4x8xf32, #cp>
    %e3 = tensor.empty() : tensor<4x8xf32, #cp>
    %r3 = fbl.dispatch @k0_v1 ins(%r2 : tensor<4x8xf32, #cp>) outs(%e3 : tensor<4x8xf32, #cp>) grid [2, 4, 1] workgroup [2, 4, 1] {
    ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
      %i = fbl.work_item_id 0
      %j = fbl.work_item_id 1
      %c0 = arith.constant 0 : index
      %t = fbl.load_texel %a[%c0, %j, %i] : tensor<4x8xf32, #cp>
      %u = math.exp %t : vector<4xf32>
      fbl.store_texel %u, %o[%c0, %j, %i] : tensor<4x8xf32, #cp>
      fbl.kernel_return
    } -> tensor<4x8xf32, #cp>
    return %r0, %r1, %r2, %r3 : tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>
  }
}
