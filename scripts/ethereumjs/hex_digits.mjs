// The value of each hex digit by its character code, for the conversions one_pass_rlp.mjs and
// word_handlers.mjs make without ethereumjs's hex round trips: 0-15 for '0'-'9', 'a'-'f' and 'A'-'F',
// 255 for any other character below 128 (a caller reading untrusted text checks for it).
export const DIGIT_VALUES = new Uint8Array(128).fill(255)
for (let digit = 0; digit < 16; digit++) {
  DIGIT_VALUES['0123456789abcdef'.charCodeAt(digit)] = digit
  DIGIT_VALUES['0123456789ABCDEF'.charCodeAt(digit)] = digit
}
