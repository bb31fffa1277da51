// balgen's access tracer, built into go-ethereum's `evm` by scripts/install-tools.sh
// (added to eth/tracers/native with `go build -overlay`; no go-ethereum file is changed).
//
// For each transaction it reports the accounts and storage slots the transaction
// touched, with their values at its end, and the contracts it created with their
// code size, as JSON:
//
//	{"accounts": {addr: [balance, nonce]}, "storage": {addr: {slot: value}}, "created": {addr: size},
//	 "blockhashes": [number]}
//
// Touched accounts are the sender and recipient, every call, create and
// selfdestruct frame's target, and the operands of BALANCE and EXTCODE*;
// touched slots are those of SLOAD and SSTORE in the frame's storage context;
// blockhashes are the block numbers BLOCKHASH asked for (left out when none),
// the one input of a transaction that is neither state nor the block's header.
// System calls are not traced, so the tracer can run on the block's real
// pre-state in the run that builds the block; its state resets with each
// transaction, so t8n's per-transaction result files hold one transaction each.
package native

import (
	"encoding/json"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/tracing"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/core/vm"
	"github.com/ethereum/go-ethereum/eth/tracers"
	"github.com/ethereum/go-ethereum/params"
)

func init() {
	tracers.DefaultDirectory.Register("balgenAccessTracer", newBalgenAccessTracer, false)
}

type balgenAccessTracer struct {
	env          *tracing.VMContext
	inSystemCall bool
	accounts     map[common.Address]struct{}
	slots        map[common.Address]map[common.Hash]struct{}
	created      map[common.Address]struct{}
	blockHashes  []uint64
}

func newBalgenAccessTracer(_ *tracers.Context, _ json.RawMessage, _ *params.ChainConfig) (*tracers.Tracer, error) {
	t := &balgenAccessTracer{}
	t.reset()
	return &tracers.Tracer{
		Hooks: &tracing.Hooks{
			OnTxStart:         t.onTxStart,
			OnEnter:           t.onEnter,
			OnOpcode:          t.onOpcode,
			OnSystemCallStart: func() { t.inSystemCall = true },
			OnSystemCallEnd:   func() { t.inSystemCall = false },
		},
		GetResult: t.getResult,
		Stop:      func(error) {},
	}, nil
}

func (t *balgenAccessTracer) reset() {
	t.accounts = map[common.Address]struct{}{}
	t.slots = map[common.Address]map[common.Hash]struct{}{}
	t.created = map[common.Address]struct{}{}
	t.blockHashes = nil
}

func (t *balgenAccessTracer) onTxStart(env *tracing.VMContext, _ *types.Transaction, from common.Address) {
	t.env = env
	t.reset()
	t.accounts[from] = struct{}{}
}

func (t *balgenAccessTracer) onEnter(_ int, typ byte, _ common.Address, to common.Address, _ []byte, _ uint64, _ *big.Int) {
	if t.inSystemCall {
		return
	}
	t.accounts[to] = struct{}{}
	if op := vm.OpCode(typ); op == vm.CREATE || op == vm.CREATE2 {
		t.created[to] = struct{}{}
	}
}

func (t *balgenAccessTracer) onOpcode(_ uint64, op byte, _, _ uint64, scope tracing.OpContext, _ []byte, _ int, _ error) {
	if op < byte(vm.BALANCE) || op > byte(vm.SSTORE) || t.inSystemCall {
		return
	}
	switch vm.OpCode(op) {
	case vm.SLOAD, vm.SSTORE:
		stack := scope.StackData()
		address := scope.Address()
		slots, ok := t.slots[address]
		if !ok {
			slots = map[common.Hash]struct{}{}
			t.slots[address] = slots
		}
		slots[common.Hash(stack[len(stack)-1].Bytes32())] = struct{}{}
	case vm.BALANCE, vm.EXTCODESIZE, vm.EXTCODECOPY, vm.EXTCODEHASH:
		stack := scope.StackData()
		t.accounts[common.Address(stack[len(stack)-1].Bytes20())] = struct{}{}
	case vm.BLOCKHASH:
		stack := scope.StackData()
		t.blockHashes = append(t.blockHashes, stack[len(stack)-1].Uint64())
	}
}

type balgenAccessResult struct {
	Accounts    map[common.Address][2]any                      `json:"accounts"`
	Storage     map[common.Address]map[common.Hash]common.Hash `json:"storage"`
	Created     map[common.Address]int                         `json:"created"`
	BlockHashes []uint64                                       `json:"blockhashes,omitempty"`
}

func (t *balgenAccessTracer) getResult() (json.RawMessage, error) {
	db := t.env.StateDB
	out := balgenAccessResult{
		Accounts:    map[common.Address][2]any{},
		Storage:     map[common.Address]map[common.Hash]common.Hash{},
		Created:     map[common.Address]int{},
		BlockHashes: t.blockHashes,
	}
	for address := range t.slots {
		t.accounts[address] = struct{}{}
	}
	for address := range t.accounts {
		out.Accounts[address] = [2]any{(*hexutil.Big)(db.GetBalance(address).ToBig()), db.GetNonce(address)}
	}
	for address, slots := range t.slots {
		values := map[common.Hash]common.Hash{}
		for slot := range slots {
			values[slot] = db.GetState(address, slot)
		}
		out.Storage[address] = values
	}
	for address := range t.created {
		out.Created[address] = len(db.GetCode(address))
	}
	t.reset()
	return json.Marshal(out)
}
