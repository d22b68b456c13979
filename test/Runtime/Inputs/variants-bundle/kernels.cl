// One launch, three functions that write the same results: k0_fill_slow
// (the manifest's function) first spends a long loop on a value that never
// changes them; k0_fill writes them at once; k0_fill_args takes one
// argument too few (not a valid variant).
__kernel void k0_fill_slow(__global float *restrict o0, __write_only image2d_t o1) {
  int x = get_global_id(0);
  float acc = x;
  for (int i = 0; i < 400000; ++i)
    acc = sin(acc + i);
  float v = acc == 1234.5f ? -1.0f : x;
  o0[x] = v;
  write_imagef(o1, (int2)(x, 0), (float4)(v, v, v, v));
}

__kernel void k0_fill(__global float *restrict o0, __write_only image2d_t o1) {
  int x = get_global_id(0);
  o0[x] = x;
  write_imagef(o1, (int2)(x, 0), (float4)(x, x, x, x));
}

__kernel void k0_fill_args(__global float *restrict o0) {
  o0[get_global_id(0)] = 0;
}
