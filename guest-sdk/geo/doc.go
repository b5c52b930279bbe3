// Package geo is the geohash and distance arithmetic of Redis 7.0's geo
// commands, operation for operation, so that scores, positions and
// distances are redis-server's to the last bit: the geohash encoding and
// decoding, the cells a search visits and the score ranges that cover
// them, the haversine distance with correctly rounded sin, cos and asin
// (as glibc's nearly always are), and the test of a member against a
// search area.
//
// Both sides of the ABI use it: the geo module (commands/geo) to encode
// positions, find the ranges a search reads and measure distances, and
// the stores (host/store/memory, host/store/aerospike) natively, to keep
// only the members inside the area of a codec.OpMapGeoSearch (Filter,
// AppendPoint), so that the arithmetic lives once.
package geo
