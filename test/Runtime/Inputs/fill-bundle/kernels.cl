__kernel void k0_fill(__global float *restrict o0, __write_only image2d_t o1) {
  int x = get_global_id(0);
  o0[x] = x;
  write_imagef(o1, (int2)(x, 0), (float4)(x, x, x, x));
}
