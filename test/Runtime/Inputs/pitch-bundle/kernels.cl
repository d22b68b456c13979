__constant sampler_t s =
    CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;

__kernel void k0_copy(__read_only image2d_t a, __global float4 *restrict t,
                      __write_only image2d_t o) {
  int x = get_global_id(0), y = get_global_id(1);
  float4 v = read_imagef(a, s, (int2)(x, y));
  t[y * 4 + x] = v;
  write_imagef(o, (int2)(x, y), v + 100.0f);
}
