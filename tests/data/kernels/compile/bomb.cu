// Compile fixture: a template-instantiation bomb. F<N, M> instantiates F<N-1, 2M> and F<N-1, 2M+1>, all
// distinct, so F<40, 0> asks for 2^40 instantiations: the compile must be killed at its limit.
// kforge:launch boom grid=(1) block=(1) args=(y)
template <int N, long long M> struct F {
	static constexpr long long v = F<N - 1, 2 * M>::v + F<N - 1, 2 * M + 1>::v;
};
template <long long M> struct F<0, M> {
	static constexpr long long v = M;
};
extern "C" __global__ void boom(long long *y)
{
	y[0] = F<40, 0>::v;
}
