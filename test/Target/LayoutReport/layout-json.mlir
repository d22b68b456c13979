// RUN: fbl-translate --fbl-to-layout-json %s | FileCheck %s

// Each encoded tensor is described once with its image; views name the value
// whose memory they address and add no bytes.

// CHECK:      "target": "pocl-cpu"
// CHECK:      "name": "report"
// CHECK:      "value": "%arg0"
// CHECK-NEXT: "type": "tensor<6x10xf32, #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>>"
// CHECK-NEXT: "storage": "image2d"
// CHECK-NEXT: "extents": [
// CHECK-NEXT:   12,
// CHECK-NEXT:   2,
// CHECK-NEXT:   1
// CHECK-NEXT: ],
// CHECK-NEXT: "channels": 4,
// CHECK-NEXT: "bytes": 384,
// CHECK-NEXT: "padding_bytes": 144,
// CHECK-NEXT: "texel_map": "(d0, d1) -> (0, d0 floordiv 4, (d1 floordiv 4) * 4 + d0 mod 4, d1 mod 4)",
// CHECK-NEXT: "fits_target": true
// CHECK:      "value": "%arg1"
// CHECK:      "storage": "buffer"
// CHECK:      "channels": 1,
// CHECK-NEXT: "bytes": 60,
// CHECK:      "texel_map": "(d0, d1) -> (0, 0, d0 * 5 + d1, 0)",
// CHECK:      "value": "%arg2"
// CHECK:      "storage": "image2d_array"
// CHECK:      "value": "%0"
// CHECK-NEXT: "view_of": "%arg0"
// CHECK:      "images": 2,
// CHECK-NEXT: "buffers": 1,
// CHECK-NEXT: "views": 1,
// CHECK-NEXT: "total_bytes": 540,
// CHECK-NEXT: "over_target_limits": 0,
// CHECK-NEXT: "tensors_by_layout": {
// CHECK-NEXT:   "#fbl.buffer": 1,
// CHECK-NEXT:   "#fbl.channel_packed": 1,
// CHECK-NEXT:   "#fbl.rtile": 2
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @report(%a: tensor<6x10xf32, #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>>,
                    %b: tensor<3x5xf32, #fbl.buffer>,
                    %c: tensor<2x3x8xf16, #fbl.channel_packed<packed = 2, batch = layers>>) {
    %0 = fbl.transpose_view %a, [1, 0] : tensor<6x10xf32, #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>>
        -> tensor<10x6xf32, #fbl.rtile<tile = [4, 4], packed = 0, inter = col_major>>
    return
  }
}
