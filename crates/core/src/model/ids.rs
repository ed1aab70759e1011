//! Small copyable identifiers. Indices into the ruleset's tables or the game state's object list.

use serde::Serialize;

macro_rules! id {
    ($(#[$m:meta])* $name:ident($t:ty)) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        pub struct $name(pub $t);
        impl $name {
            /// The index into the table this id names.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id!(/// An object (card, unit, building) in the game state.
    ObjectId(u32));
id!(/// A player, by seat order.
    PlayerId(u8));
id!(/// A characteristic declared by the ruleset.
    CharId(u16));
id!(/// A player property declared by the ruleset.
    PropId(u16));
id!(/// A zone declared by the ruleset.
    ZoneId(u16));
id!(/// An object class (a card) declared in content.
    ClassId(u32));
id!(/// A counter kind declared by the ruleset.
    CounterId(u16));
id!(/// A layer or sublayer, in application order.
    LayerId(u16));
id!(/// A type of game object declared by the ruleset (`type planet: ...`).
    TypeId(u16));

/// When an object entered its zone, became attached, or an effect was created (CR 613.7).
/// Timestamps only grow; a later timestamp is applied later within a layer.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
pub struct Timestamp(pub u64);

id!(/// An event kind declared by the ruleset.
    EventId(u16));

/// A value slot an effect writes: an object's characteristic or a player's property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SlotTarget {
    /// An object's characteristic.
    Char(CharId),
    /// A player's property.
    Prop(PropId),
}
