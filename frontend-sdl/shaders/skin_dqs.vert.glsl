// Dual-quaternion skinning with scale. Follows skin_common.vert.glsl (attributes, uniforms,
// emitSkinned). The palette holds four vectors per joint: the dual quaternion's real and dual
// parts (x, y, z, w), then its scale/shear factor P (symmetric) as (xx, yy, zz, xy) and
// (xz, yz, 0, 0). The vertex is scaled by the blended P first, its normal by P's inverse
// transpose.

uniform vec4 u_jointDQ[JOINTS * 4];

void main() {
    ivec4 j = ivec4(a_jointIndices + 0.5) * 4;
    vec4 w = a_jointWeights;
    vec4 q0 = u_jointDQ[j.x];
    vec4 q1 = u_jointDQ[j.y];
    vec4 q2 = u_jointDQ[j.z];
    vec4 q3 = u_jointDQ[j.w];
    // Blend on the hemisphere of the first influence.
    float s1 = dot(q0, q1) < 0.0 ? -w.y : w.y;
    float s2 = dot(q0, q2) < 0.0 ? -w.z : w.z;
    float s3 = dot(q0, q3) < 0.0 ? -w.w : w.w;
    vec4 real = q0 * w.x + q1 * s1 + q2 * s2 + q3 * s3;
    vec4 dual = u_jointDQ[j.x + 1] * w.x + u_jointDQ[j.y + 1] * s1 + u_jointDQ[j.z + 1] * s2
        + u_jointDQ[j.w + 1] * s3;
    // The scale factor P, blended linearly: (xx, yy, zz, xy) and (xz, yz).
    vec4 pa = u_jointDQ[j.x + 2] * w.x + u_jointDQ[j.y + 2] * w.y + u_jointDQ[j.z + 2] * w.z
        + u_jointDQ[j.w + 2] * w.w;
    vec2 pb = u_jointDQ[j.x + 3].xy * w.x + u_jointDQ[j.y + 3].xy * w.y + u_jointDQ[j.z + 3].xy * w.z
        + u_jointDQ[j.w + 3].xy * w.w;
    mat3 P = mat3(pa.x, pa.w, pb.x, pa.w, pa.y, pb.y, pb.x, pb.y, pa.z);
    // Its adjugate (det P * P^-1, symmetric), divided by the largest diagonal entry.
    float ps = max(max(abs(pa.x), abs(pa.y)), abs(pa.z));
    mat3 Q = ps > 0.0 ? P * (1.0 / ps) : mat3(0.0);
    vec3 c0 = cross(Q[1], Q[2]);
    mat3 adj = mat3(c0, cross(Q[2], Q[0]), cross(Q[0], Q[1]));
    float det = dot(Q[0], c0);
    float len = length(real);
    if (len > 0.0) {
        real /= len;
        dual /= len;
    } else {
        real = vec4(0.0, 0.0, 0.0, 1.0);
        dual = vec4(0.0);
    }
    vec3 t = 2.0 * (real.w * dual.xyz - dual.w * real.xyz + cross(real.xyz, dual.xyz));
    vec3 sp = P * a_position;
    vec3 sn = (det < 0.0 ? -1.0 : 1.0) * (adj * a_normal);
    vec3 skinned = sp + 2.0 * cross(real.xyz, cross(real.xyz, sp) + real.w * sp) + t;
    vec3 n = sn + 2.0 * cross(real.xyz, cross(real.xyz, sn) + real.w * sn);
    emitSkinned(skinned, n);
}
