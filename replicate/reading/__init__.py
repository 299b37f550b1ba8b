"""Reading a released file: the reader contract (contract.py: Reader, Record, Source, ReadOptions, READERS)
and the toolkit readers build on: blocks and lines of bytes, gzip undone (stream.py), JSON lines and flat judge
records (jsonl.py), Parquet (parquet.py)."""
