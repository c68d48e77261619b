package driver

import "errors"

// EachMemory calls fn with the current version of each of ids that exists,
// in the order of ids, reading them at once when tx can (MultiGetter) and
// one by one otherwise.
func EachMemory(tx ReadTx, ids []int64, fn func(*Memory) error) error {
	if mg, ok := tx.(MultiGetter); ok {
		got, err := mg.GetMany(ids)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if m := got[id]; m != nil {
				if err := fn(m); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, id := range ids {
		m, err := tx.Get(id, 0)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}
