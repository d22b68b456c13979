// RUN: fbl-opt %s -fbl-lower-to-kernels | FileCheck %s

// A module whose only op is a relayout (and that never loaded the tensor
// dialect): the pass creates the output's tensor.empty itself.
// CHECK-LABEL: func.func @relayout_between_layouts
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x8xf32, #fbl.channel_packed<packed = 0>>
// CHECK: fbl.dispatch @k0_relayout ins(%{{.*}}) outs(%[[E]] : {{.*}}) grid [8, 2, 1]
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @relayout_between_layouts(%x: tensor<8x8xf32, #fbl.channel_packed<packed = 1>>) -> tensor<8x8xf32, #fbl.channel_packed<packed = 0>> {
    %r = fbl.relayout %x : tensor<8x8xf32, #fbl.channel_packed<packed = 1>> to tensor<8x8xf32, #fbl.channel_packed<packed = 0>>
    return %r : tensor<8x8xf32, #fbl.channel_packed<packed = 0>>
  }
}
