// SPDX-License-Identifier: Apache-2.0
import Policy
/// The seeds' keys and passes: the bench's (Sources/DevTools/PassBench.swift), minted by
/// harness/pass/peer.py; the same bytes are Fuzz/Corpus/pass/*.
enum PassSeeds {
    static let issuerKey = """
-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEg9W3CjUOM5XRky+pSjPTTwS+1ljs
xuC8LdjunB/scFdil6AvIZJOiF0tU/bmOzgcbXXv7+hm59BVB34sYGg8Cg==
-----END PUBLIC KEY-----
"""
    static let holderKey = "pAECIAEhWCDwG_oceY00X_ZT5edqiElTot_a7mfjawQ3-8fU6kl08yJYIAwuUqDSFsfruIePcIT50nFNniUMeKLtFtuS2lk7HsyU"
    static let passes: [[UInt8]] = ["4b48313a840158d48443a10126a1044a62656e63682d70617373587ea7016562656e6368026c62656e63682d686f6c6465720366646f6f722d31041a" +
        "f4865700051a6553f100061a6553f10008a101a401022001215820f01bfa1c798d345ff653e5e76a884953a2dfdaee67e36b0437fbc7d4ea4974f322" +
        "58200c2e52a0d216c7ebb8878f7084f9d2714d9e250c78a2ed16db92da593b1ecc945840635251027b70e3a8a63366ecb55351091ff76e431871b1d0" +
        "86399c6c0b004cc6df8d10f8c1a05210639640e0e832e15bd63d10e2118ee59cd423efb6125c7c141a15752a005840d662c0e4e70b6056d5bc6c7fa6" +
        "4cb2ef09031f37c6c3a8484024e295f1afca85cf7c700dc4ee1450ea3c65c023bff39f40d3684e0f6adc6396c18b3439f3e0d5",
        "4b48313a8402487e6e5d1d941959b01a15752a005840f32bb9c78699bd07e1b6e3064c01d1036de5feb596fabf36d1aceb277e1faf5337e81d273990" +
        "2c89b2ef4d24d86183bdbbd0c6b7b1644866eaa14c4e951821c7",
        "4b48313a840158b38443a10126a1044a62656e63682d70617373585da7016562656e6368026c62656e63682d686f6c6465720366646f6f722d31041a" +
        "f4865700051a6553f100061a6553f10008a101a401022001215820e60c16cf501904601fe74971de9dbf92768ab4bec9d0726b49e8be6b3b29b3cd22" +
        "f45840116e527f102007326f548231a77918e72a2c31c5a61bc6509094f03179ace1d8bcc771228c75c35a0dadb4a26f79593c1551bf2a66ca51d09d" +
        "0be4e6f38bd0a71a15752a005840660f83b72c46dc122f8ed0bbc9966e2e2b7eb5bc5b837520311484e4991a8f9c6c7076c2145ef8d3dae48b3b2b42" +
        "ec7b54a3b471ba59970d5fc5e2e1a8997a3c"].map(bytes)

    /// The bytes of a hex string the code itself wrote (a bad one is a programming error).
    static func bytes(_ hex: String) -> [UInt8] { Hex.bytes(hex)! }
}
