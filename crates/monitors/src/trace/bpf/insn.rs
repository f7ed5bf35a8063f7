//! A small typed builder of eBPF instructions, with labels for forward jumps.
//!
//! Only what the span programs need: 64-bit ALU, loads and stores, conditional jumps,
//! helper calls, `ld_imm64` (constants and map fds). Encoding follows the kernel's
//! `struct bpf_insn` (Documentation/bpf/standardization/instruction-set.rst): one byte of
//! opcode, dst in the low and src in the high nibble, a 16-bit offset, a 32-bit immediate.

/// A register: r0 return value, r1–r5 arguments (clobbered by calls), r6–r9 kept across
/// calls, r10 the read-only frame pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reg(pub u8);

pub const R0: Reg = Reg(0);
pub const R1: Reg = Reg(1);
pub const R2: Reg = Reg(2);
pub const R3: Reg = Reg(3);
pub const R4: Reg = Reg(4);
pub const R5: Reg = Reg(5);
pub const R6: Reg = Reg(6);
pub const R7: Reg = Reg(7);
pub const R8: Reg = Reg(8);
pub const R9: Reg = Reg(9);
pub const FP: Reg = Reg(10);

/// One 8-byte instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    pub code: u8,
    pub dst: u8,
    pub src: u8,
    pub off: i16,
    pub imm: i32,
}

impl Insn {
    pub fn encode(&self) -> [u8; 8] {
        let off = self.off.to_le_bytes();
        let imm = self.imm.to_le_bytes();
        [
            self.code,
            (self.src << 4) | (self.dst & 0x0f),
            off[0],
            off[1],
            imm[0],
            imm[1],
            imm[2],
            imm[3],
        ]
    }
}

// Instruction classes, sizes, modes and operations (include/uapi/linux/bpf_common.h, bpf.h).
const LD: u8 = 0x00;
const LDX: u8 = 0x01;
const ST: u8 = 0x02;
const STX: u8 = 0x03;
const JMP: u8 = 0x05;
const ALU64: u8 = 0x07;
const IMM: u8 = 0x00;
const MEM: u8 = 0x60;
const ATOMIC: u8 = 0xc0;
/// The atomic operations' immediates: add, and compare-and-exchange (which fetches).
const ATOMIC_ADD: i32 = 0x00;
const ATOMIC_CMPXCHG: i32 = 0xf0 | 0x01;
const K: u8 = 0x00;
const X: u8 = 0x08;
const CALL: u8 = 0x80;
const EXIT: u8 = 0x90;
const PSEUDO_MAP_FD: u8 = 1;

/// Access sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    B = 0x10,
    H = 0x08,
    W = 0x00,
    DW = 0x18,
}

impl Size {
    /// The size of a field of `bytes` bytes, if one load reads it.
    pub fn of(bytes: u32) -> Option<Size> {
        match bytes {
            1 => Some(Size::B),
            2 => Some(Size::H),
            4 => Some(Size::W),
            8 => Some(Size::DW),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alu {
    Add = 0x00,
    Sub = 0x10,
    Mul = 0x20,
    Or = 0x40,
    And = 0x50,
    Lsh = 0x60,
    Rsh = 0x70,
    Mov = 0xb0,
    Arsh = 0xc0,
}

/// Conditional jumps (unsigned comparisons unless named otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    Eq = 0x10,
    Gt = 0x20,
    Ge = 0x30,
    Ne = 0x50,
    Lt = 0xa0,
    Le = 0xb0,
}

/// Kernel helper functions by number (enum bpf_func_id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Helper {
    MapLookupElem = 1,
    MapUpdateElem = 2,
    MapDeleteElem = 3,
    KtimeGetNs = 5,
    GetSmpProcessorId = 8,
    GetCurrentPidTgid = 14,
    ProbeReadKernel = 113,
}

/// A jump target, bound to a position later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label(usize);

/// Collects instructions; jumps to labels are patched in [`Asm::finish`].
#[derive(Debug, Default)]
pub struct Asm {
    insns: Vec<Insn>,
    labels: Vec<Option<usize>>,
    fixups: Vec<(usize, Label)>,
}

impl Asm {
    pub fn new() -> Self {
        Self::default()
    }

    fn push(&mut self, code: u8, dst: Reg, src: Reg, off: i16, imm: i32) {
        self.insns.push(Insn {
            code,
            dst: dst.0,
            src: src.0,
            off,
            imm,
        });
    }

    pub fn len(&self) -> usize {
        self.insns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.insns.is_empty()
    }

    /// `dst op= imm` on 64 bits.
    pub fn alu_imm(&mut self, op: Alu, dst: Reg, imm: i32) {
        self.push(ALU64 | op as u8 | K, dst, R0, 0, imm);
    }

    /// `dst op= src` on 64 bits.
    pub fn alu_reg(&mut self, op: Alu, dst: Reg, src: Reg) {
        self.push(ALU64 | op as u8 | X, dst, src, 0, 0);
    }

    pub fn mov_imm(&mut self, dst: Reg, imm: i32) {
        self.alu_imm(Alu::Mov, dst, imm);
    }

    pub fn mov(&mut self, dst: Reg, src: Reg) {
        self.alu_reg(Alu::Mov, dst, src);
    }

    /// `dst = imm` for any 64-bit constant (two instruction slots).
    pub fn ld_imm64(&mut self, dst: Reg, imm: u64) {
        self.push(LD | Size::DW as u8 | IMM, dst, R0, 0, imm as u32 as i32);
        self.push(0, R0, R0, 0, (imm >> 32) as u32 as i32);
    }

    /// `dst = the map whose fd is fd` (the loader turns the fd into the map's address).
    pub fn ld_map_fd(&mut self, dst: Reg, fd: i32) {
        self.push(LD | Size::DW as u8 | IMM, dst, Reg(PSEUDO_MAP_FD), 0, fd);
        self.push(0, R0, R0, 0, 0);
    }

    /// `dst = *(size *)(src + off)`, zero-extended.
    pub fn load(&mut self, size: Size, dst: Reg, src: Reg, off: i16) {
        self.push(LDX | MEM | size as u8, dst, src, off, 0);
    }

    /// `*(size *)(dst + off) = src`.
    pub fn store(&mut self, size: Size, dst: Reg, off: i16, src: Reg) {
        self.push(STX | MEM | size as u8, dst, src, off, 0);
    }

    /// `*(u64 *)(dst + off) += src`, atomically (`lock add` once jitted on x86).
    pub fn atomic_add(&mut self, dst: Reg, off: i16, src: Reg) {
        self.push(STX | ATOMIC | Size::DW as u8, dst, src, off, ATOMIC_ADD);
    }

    /// `r0 = cmpxchg((u64 *)(dst + off), r0, src)`: stores `src` where the word equals
    /// r0, and r0 is the word as it was either way.
    pub fn atomic_cmpxchg(&mut self, dst: Reg, off: i16, src: Reg) {
        self.push(STX | ATOMIC | Size::DW as u8, dst, src, off, ATOMIC_CMPXCHG);
    }

    /// `*(size *)(dst + off) = imm`.
    pub fn store_imm(&mut self, size: Size, dst: Reg, off: i16, imm: i32) {
        self.push(ST | MEM | size as u8, dst, R0, off, imm);
    }

    pub fn call(&mut self, h: Helper) {
        self.push(JMP | CALL, R0, R0, 0, h as i32);
    }

    pub fn exit(&mut self) {
        self.push(JMP | EXIT, R0, R0, 0, 0);
    }

    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// The next instruction is `l`'s target.
    pub fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.insns.len());
    }

    pub fn ja(&mut self, to: Label) {
        self.fixups.push((self.insns.len(), to));
        self.push(JMP, R0, R0, 0, 0);
    }

    /// `if dst cond imm goto to` (imm sign-extended to 64 bits).
    pub fn jmp_imm(&mut self, cond: Cond, dst: Reg, imm: i32, to: Label) {
        self.fixups.push((self.insns.len(), to));
        self.push(JMP | cond as u8 | K, dst, R0, 0, imm);
    }

    /// `if dst cond src goto to`.
    pub fn jmp_reg(&mut self, cond: Cond, dst: Reg, src: Reg, to: Label) {
        self.fixups.push((self.insns.len(), to));
        self.push(JMP | cond as u8 | X, dst, src, 0, 0);
    }

    /// The program, every jump resolved; an error for an unbound label or a jump too far.
    pub fn finish(mut self) -> Result<Vec<Insn>, String> {
        for (at, l) in &self.fixups {
            let target = self.labels[l.0].ok_or("a jump to a label never bound")?;
            let off = target as i64 - (*at as i64 + 1);
            self.insns[*at].off = i16::try_from(off)
                .map_err(|_| format!("a jump of {off} instructions is too far"))?;
        }
        Ok(self.insns)
    }
}

/// The bytes the kernel loads.
pub fn bytes(insns: &[Insn]) -> Vec<u8> {
    insns.iter().flat_map(Insn::encode).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(insns: &[Insn]) -> Vec<String> {
        insns
            .iter()
            .map(|i| i.encode().iter().map(|b| format!("{b:02x}")).collect())
            .collect()
    }

    #[test]
    fn assembles_known_encodings() {
        // Each line as `llvm-objdump -d` prints it for clang -target bpf.
        let mut a = Asm::new();
        a.mov(R6, R1); // r6 = r1
        a.mov_imm(R0, 0); // r0 = 0
        a.load(Size::W, R1, R6, 24); // r1 = *(u32 *)(r6 + 24)
        a.store(Size::DW, FP, -8, R0); // *(u64 *)(r10 - 8) = r0
        a.store_imm(Size::W, FP, -24, 3); // *(u32 *)(r10 - 24) = 3
        a.alu_imm(Alu::Add, R2, -24); // r2 += -24
        a.alu_reg(Alu::Rsh, R1, R4); // r1 >>= r4
        a.call(Helper::MapLookupElem); // call 1
        a.ld_imm64(R2, 0x1_0000_0002); // r2 = 0x100000002 ll
        a.ld_map_fd(R1, 5); // r1 = map[fd 5]
        a.exit();
        assert_eq!(
            hex(&a.finish().unwrap()),
            [
                "bf16000000000000",
                "b700000000000000",
                "6161180000000000",
                "7b0af8ff00000000",
                "620ae8ff03000000",
                "07020000e8ffffff",
                "7f41000000000000",
                "8500000001000000",
                "1802000002000000",
                "0000000001000000",
                "1811000005000000",
                "0000000000000000",
                "9500000000000000",
            ]
        );
    }

    #[test]
    fn assembles_atomics() {
        // As llvm-objdump prints them (clang -target bpf -mcpu=v3).
        let mut a = Asm::new();
        a.atomic_add(R0, 16, R1); // lock *(u64 *)(r0 + 16) += r1
        a.atomic_cmpxchg(R3, 8, R9); // r0 = cmpxchg_64(r3 + 8, r0, r9)
        assert_eq!(
            hex(&a.finish().unwrap()),
            ["db10100000000000", "db930800f1000000"]
        );
    }

    #[test]
    fn jumps_resolve_forward_and_backward() {
        let mut a = Asm::new();
        let top = a.label();
        let out = a.label();
        a.bind(top);
        a.jmp_imm(Cond::Eq, R0, 0, out); // 0: +2
        a.jmp_reg(Cond::Lt, R9, R8, out); // 1: +1
        a.ja(top); // 2: -3
        a.bind(out);
        a.exit();
        let p = a.finish().unwrap();
        assert_eq!(
            hex(&p),
            [
                "1500020000000000",
                "ad89010000000000",
                "0500fdff00000000",
                "9500000000000000"
            ]
        );
    }

    #[test]
    fn an_unbound_label_is_an_error() {
        let mut a = Asm::new();
        let l = a.label();
        a.ja(l);
        assert!(a.finish().unwrap_err().contains("never bound"));
    }
}
