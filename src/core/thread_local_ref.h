// A thread_local's address, looked up once per function. In a shared library every access to
// a thread_local calls __tls_get_addr (a dozen instructions), and GCC, which counts that as
// cheap, looks the address up again after each call it makes instead of keeping it in a
// register: four lookups on one ATen call's path through the bridge. An empty asm statement
// makes the address an opaque value, which the compiler must keep.
#pragma once

namespace lg::detail {

template <typename T>
[[gnu::always_inline]] inline T& thread_local_ref(T& variable) {
  T* address = &variable;
  asm("" : "+r"(address));
  return *address;
}

}  // namespace lg::detail
